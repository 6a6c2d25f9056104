#!/bin/sh
# reel against GStreamer's v4l2codecs on the V4L2 path, side by side in one
# boot of the test guest (visl decoding, weston 14 headless): decode only
# and into weston, 720p and 1080p H.264 (main, B-frames), interleaved runs
# (benches/guest/compare.sh), then the table (benches/guest/summarise.py):
# CPU per steady-state frame, start-up CPU, max RSS, syscalls per frame,
# time to the first decoded picture, client CPU into weston and the time
# to the first picture on screen.
#
#   benches/guest-compare.sh [RUNS]     release build, RUNS rounds (default 3)
#   benches/guest-compare.sh --smoke    one round on a small clip (benches/smoke.sh
#                                       runs this: tests/guest_bench.rs)
#
# REEL_BIN: the reel binary to measure (default: a release build made here).
# The runs stay in target/vm-runs/bench-compare-DATE/; the table is printed
# and saved there as table.md.
set -eu
project=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --smoke ]; then
    sizes=320x240 long=30 short=10 runs=1
else
    # 750 frames: a run's CPU time wanders by tens of milliseconds, which
    # over 150 frames was more than a frame's cost.
    sizes="1280x720 1920x1080" long=750 short=25 runs=${1:-3}
fi
# shellcheck disable=SC2086
clips=$("$project/benches/guest/clips.sh" "$project/target/bench-media/compare-$long-$short" \
    "$long" "$short" $sizes | tr '\n' ' ')

reel=${REEL_BIN:-}
if [ -z "$reel" ]; then
    (cd "$project" && cargo build --release --bins --quiet)
    reel=$project/target/release/reel
fi
dir=${REEL_BENCH_DIR:-$project/target/vm-runs/bench-compare-$(date -u +%Y%m%d-%H%M%S)}
# Under TCG a round of both sizes takes about five minutes (callgrind's
# runs the longest).
# shellcheck disable=SC2086
"$project/tests/vm/run.sh" --dir "$dir" --timeout $((900 + 600 * runs)) -- \
    "$project/benches/guest/compare.sh" "$reel" "$runs" $clips
rc=$(cat "$dir/exit_code")
if [ "$rc" != 0 ]; then
    echo "guest-compare: the guest script failed ($rc); its stderr:" >&2
    cat "$dir/stderr" >&2
    exit 1
fi
python3 "$project/benches/guest/summarise.py" "$dir/out" "$long" "$short" >"$dir/table.md"
cat "$dir/table.md"
echo "(runs in $dir)"
