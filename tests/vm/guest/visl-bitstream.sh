#!/bin/sh
# Inside the guest: runs a command with visl keeping a copy of every OUTPUT
# buffer it decodes (its debugfs bitstream dump), and saves the copies as
# $REEL_RESULTS/NAME.bitstream/bitstreamN (N: the order visl decoded them
# in, from 0, across every STREAMON of the command, as a resolution change
# makes). visl is reloaded first so that each command's dump starts empty.
#
#   tests/vm/guest/visl-bitstream.sh NAME COMMAND [ARGS...]
#
# Exits with COMMAND's status; 2 if visl cannot be reloaded for the dump.
set -eu
name=$1
shift
out="${REEL_RESULTS:?not in the test guest}/$name.bitstream"
debug=/sys/kernel/debug
mountpoint -q "$debug" || mount -t debugfs debugfs "$debug"
"$(dirname "$0")/visl-reload.sh" keep_bitstream_buffers=1 bitstream_trace_frame_start=0 \
    bitstream_trace_nframes=1000000 || exit 2

rc=0
"$@" || rc=$?

mkdir -p "$out"
for blob in "$debug"/visl/bitstream/bitstream*; do
    [ -e "$blob" ] && cp "$blob" "$out/"
done
echo "$rc" >"$REEL_RESULTS/$name.rc"
exit $rc
