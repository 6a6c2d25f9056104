#!/bin/sh
# (in the guest) What the guest harness must bring back to the host: writes
# to stdout and stderr, writes two files to $REEL_RESULTS (file.txt holds
# "payload", kernel the running kernel's release), copies $REEL_PROBE to
# $REEL_RESULTS/env, then exits 7.
#
#   tests/vm/guest/guest-io.sh        (environment: REEL_PROBE)
set -eu
echo to-stdout
echo to-stderr >&2
echo payload >"$REEL_RESULTS/file.txt"
uname -r >"$REEL_RESULTS/kernel"
echo "$REEL_PROBE" >"$REEL_RESULTS/env"
exit 7
