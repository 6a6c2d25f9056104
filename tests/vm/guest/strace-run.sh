#!/bin/sh
# (in the guest) Runs COMMAND under strace, recording its ioctls and mmaps
# (each fd with its path: /dev/video0, /dmabuf:, a library), with a
# time limit: NAME.strace, NAME.out (stdout), NAME.log (stderr) and NAME.rc
# (its exit status; 124 when killed at the limit) in $REEL_RESULTS. Exits 0
# once all that is saved, whatever COMMAND did.
#
#   tests/vm/guest/strace-run.sh NAME SECONDS COMMAND [ARGS...]
set -eu
name=$1
seconds=$2
shift 2
rc=0
timeout "$seconds" strace -f -qq -y -e trace=ioctl,mmap -o "$REEL_RESULTS/$name.strace" "$@" \
    >"$REEL_RESULTS/$name.out" 2>"$REEL_RESULTS/$name.log" || rc=$?
echo "$rc" >"$REEL_RESULTS/$name.rc"
