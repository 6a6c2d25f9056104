#!/bin/sh
# Runs a command inside the guest with visl's trace events on and saves the
# trace to $REEL_RESULTS/${VISL_TRACE_NAME:-visl-trace.txt}.
#
#   tests/vm/guest/visl-trace.sh COMMAND [ARGS...]
#
# Besides the visl_*_controls events, vb2:vb2_buf_done is recorded: the
# OUTPUT buffer completed after each decode run carries the request's
# timestamp, which is how a trace's runs are told apart. Fails (status 3) if
# the ring buffer dropped events; otherwise exits with COMMAND's status.
set -eu
t=/sys/kernel/tracing
out="${REEL_RESULTS:?not in the test guest}/${VISL_TRACE_NAME:-visl-trace.txt}"
[ -d "$t/events" ] || { echo "visl-trace: no tracefs at $t" >&2; exit 2; }
ls -d "$t"/events/visl_* >/dev/null 2>&1 || { echo "visl-trace: no visl trace events (is visl loaded?)" >&2; exit 2; }

echo 0 >"$t/tracing_on"
echo "${VISL_TRACE_BUFFER_KB:-32768}" >"$t/buffer_size_kb"
: >"$t/trace"
for e in "$t"/events/visl_*; do echo 1 >"$e/enable"; done
echo 1 >"$t/events/vb2/vb2_buf_done/enable"
echo 1 >"$t/tracing_on"

rc=0
"$@" || rc=$?

echo 0 >"$t/tracing_on"
for e in "$t"/events/visl_*; do echo 0 >"$e/enable"; done
echo 0 >"$t/events/vb2/vb2_buf_done/enable"
cat "$t/trace" >"$out"
# "# entries-in-buffer/entries-written: 10/12   #P:2": a difference means loss.
lost=$(awk '/entries-in-buffer\/entries-written/ { split($3, a, "/"); print a[2] - a[1]; exit }' "$out")
if [ "${lost:-0}" != 0 ]; then
    echo "visl-trace: the trace buffer dropped $lost events" >&2
    exit 3
fi
exit $rc
