#!/bin/sh
# Builds of reel (and GStreamer's v4l2codecs) side by side into weston in
# one boot of the test guest: the before and after of a step. CPU seconds
# drift between boots and hosts by more than a step changes them, so a
# step is measured against its parent in the same boot, in interleaved
# rounds (benches/guest/ab.sh), then tabled (benches/guest/ab-summary.py):
# CPU per steady-state frame and at start-up, wake-ups and syscalls per
# frame, frames presented, the time to the first picture on screen, with
# each player's ratio to the first.
#
#   benches/guest-ab.sh [RUNS] PLAYER...   RUNS rounds (default 3)
#   benches/guest-ab.sh --smoke PLAYER...  one round on a small clip
#
# PLAYER: a reel binary (e.g. a copy of target/release/reel of each
# commit; the file names tell them apart) or `gst`. REEL_AB_SIZES: the
# clip sizes (default 1280x720; the clips are guest-compare.sh's). The
# runs stay in target/vm-runs/bench-ab-DATE/; the table is printed and
# saved there as table.md.
set -eu
project=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
--smoke)
    sizes=320x240 long=30 short=10 runs=1
    shift
    ;;
[0-9]*)
    sizes=${REEL_AB_SIZES:-1280x720} long=750 short=25 runs=$1
    shift
    ;;
*) sizes=${REEL_AB_SIZES:-1280x720} long=750 short=25 runs=3 ;;
esac
if [ $# -eq 0 ]; then
    echo "usage: $0 [RUNS|--smoke] PLAYER... (a reel binary or gst)" >&2
    exit 2
fi
names=""
for player in "$@"; do
    if [ "$player" != gst ] && [ ! -x "$player" ]; then
        echo "guest-ab: $player is not an executable" >&2
        exit 2
    fi
    name=$(basename "$player")
    case " $names " in
    *" $name "*)
        echo "guest-ab: two players named $name: copy the builds to distinct names" >&2
        exit 2
        ;;
    esac
    names="$names $name"
done
# shellcheck disable=SC2086
clips=$("$project/benches/guest/clips.sh" "$project/target/bench-media/compare-$long-$short" \
    "$long" "$short" $sizes | tr '\n' ' ')
dir=${REEL_BENCH_DIR:-$project/target/vm-runs/bench-ab-$(date -u +%Y%m%d-%H%M%S)}
# A 750-frame run is 30 s into weston, plus weston's start under TCG.
# shellcheck disable=SC2086
"$project/tests/vm/run.sh" --dir "$dir" --timeout $((600 + 120 * $# * (runs + 1) * $(echo $clips | wc -w))) -- \
    "$project/benches/guest/ab.sh" "$runs" $clips -- "$@"
rc=$(cat "$dir/exit_code")
if [ "$rc" != 0 ]; then
    echo "guest-ab: the guest script failed ($rc); its stderr:" >&2
    cat "$dir/stderr" >&2
    exit 1
fi
# shellcheck disable=SC2086
python3 "$project/benches/guest/ab-summary.py" "$dir/out" "$long" "$short" $names >"$dir/table.md"
cat "$dir/table.md"
echo "(runs in $dir)"
