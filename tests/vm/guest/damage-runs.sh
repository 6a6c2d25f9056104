#!/bin/sh
# (in the guest) Runs COMMAND once per file of DIR (COMMAND ARGS... FILE),
# each under a time limit, keeping what each run did in $REEL_RESULTS/NAME/:
# FILE.out (stdout), FILE.log (stderr), FILE.rc (exit status; 124 when it
# was killed at the limit). Prints one line per run: file, status, seconds.
# Exits 0 once all that is saved, whatever the runs did.
#
# Runs go $REEL_DAMAGE_JOBS at a time (default: one per guest CPU): under
# TCG most of a short run is process start-up (dynamic linking of FFmpeg's
# libraries), which the second CPU halves. visl serves each open as its own
# context, so parallel runs do not share decoder state.
#
#   tests/vm/guest/damage-runs.sh NAME DIR SECONDS COMMAND [ARGS...]
set -eu
if [ "$1" = --one ]; then
    # One run: --one OUT SECONDS COMMAND [ARGS...] FILE (xargs appends FILE).
    out=$2
    seconds=$3
    shift 3
    for file; do :; done
    base=$(basename "$file")
    start=$(date +%s.%N)
    rc=0
    timeout -k 5 "$seconds" "$@" >"$out/$base.out" 2>"$out/$base.log" || rc=$?
    end=$(date +%s.%N)
    echo "$rc" >"$out/$base.rc"
    echo "$base rc=$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')s"
    exit 0
fi
name=$1
dir=$2
seconds=$3
shift 3
out="${REEL_RESULTS:?not in the test guest}/$name"
mkdir -p "$out"
jobs=${REEL_DAMAGE_JOBS:-$(nproc)}
find "$dir" -maxdepth 1 -type f | sort |
    xargs -d '\n' -n 1 -P "$jobs" "$0" --one "$out" "$seconds" "$@"
