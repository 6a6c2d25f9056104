#!/bin/sh
# (in the guest) Runs COMMAND with visl's trace events on (visl-trace.sh)
# and a time limit, keeping what it did in $REEL_RESULTS: NAME.out (stdout),
# NAME.log (stderr), NAME.rc (its exit status: 124 when killed at the limit,
# 3 when the trace lost events) and NAME.trace (the visl trace). Exits 0
# once all that is saved, whatever COMMAND did.
#
#   tests/vm/guest/traced-run.sh NAME SECONDS COMMAND [ARGS...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
name=$1
seconds=$2
shift 2
rc=0
VISL_TRACE_NAME="$name.trace" timeout "$seconds" "$here/visl-trace.sh" "$@" \
    >"$REEL_RESULTS/$name.out" 2>"$REEL_RESULTS/$name.log" || rc=$?
echo "$rc" >"$REEL_RESULTS/$name.rc"
