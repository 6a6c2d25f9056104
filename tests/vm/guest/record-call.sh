#!/bin/sh
# (in the guest) Runs COMMAND and appends `NAME<TAB>STATUS` (its exit
# status) to $REEL_RESULTS/calls.tsv: a boot running many calls then says
# which of them failed, and which was running when the guest was stopped
# (the first without a line). Exits with COMMAND's status.
#
#   tests/vm/guest/record-call.sh NAME COMMAND [ARGS...]
set -u
name=$1
shift
rc=0
"$@" || rc=$?
printf '%s\t%s\n' "$name" "$rc" >>"${REEL_RESULTS:?not in the test guest}/calls.tsv"
exit "$rc"
