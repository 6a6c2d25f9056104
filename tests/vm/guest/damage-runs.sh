#!/bin/sh
# (in the guest) Runs COMMAND once per file of DIR (COMMAND ARGS... FILE),
# each under a time limit, keeping what each run did in $REEL_RESULTS/NAME/:
# FILE.out (stdout), FILE.log (stderr), FILE.rc (exit status; 124 when it
# was killed at the limit). Prints one line per run: file, status, seconds.
# Exits 0 once all that is saved, whatever the runs did.
#
#   tests/vm/guest/damage-runs.sh NAME DIR SECONDS COMMAND [ARGS...]
set -eu
name=$1
dir=$2
seconds=$3
shift 3
out="${REEL_RESULTS:?not in the test guest}/$name"
mkdir -p "$out"
for file in "$dir"/*; do
    [ -f "$file" ] || continue
    base=$(basename "$file")
    start=$(date +%s.%N)
    rc=0
    timeout -k 5 "$seconds" "$@" "$file" >"$out/$base.out" 2>"$out/$base.log" || rc=$?
    end=$(date +%s.%N)
    echo "$rc" >"$out/$base.rc"
    echo "$base rc=$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')s"
done
