#!/bin/sh
# (in the guest) `reel check`: a file decoded through the V4L2 decoder and
# the software decoder side by side, for tests/guest_fwht.rs and
# tests/guest_codecs. In $REEL_RESULTS: NAME.check (stdout: a line per
# frame and the summary), NAME.check.log (stderr), NAME.check.rc (its exit
# status), NAME.check.seconds (how long it took); with CHECK_DUMP set,
# `--dump-dir $REEL_RESULTS/$CHECK_DUMP`. At most 120 s: a check that
# hangs is killed (status 124).
#
#   tests/vm/guest/reel-check.sh REEL NAME FILE [REEL CHECK OPTIONS...]
set -eu
reel=$1
name=$2
file=$3
shift 3
R=$REEL_RESULTS
began=$(date +%s)
rc=0
[ -n "${CHECK_DUMP:-}" ] && set -- --dump-dir "$R/$CHECK_DUMP" "$@"
timeout -k 5 120 "$reel" check "$@" "$file" >"$R/$name.check" 2>"$R/$name.check.log" || rc=$?
echo "$rc" >"$R/$name.check.rc"
echo "$(($(date +%s) - began))" >"$R/$name.check.seconds"
