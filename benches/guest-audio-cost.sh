#!/bin/sh
# What playing the sound costs on the V4L2 path, reel beside GStreamer, in
# one boot of the test guest with a sound card (QEMU's AC97, its sound
# going nowhere in real time): a 10 s H.264 clip with stereo AAC,
# the picture decoded by visl and shown nowhere, each player with and
# without its sound, interleaved rounds (benches/guest/audio-cost.sh). CPU
# is user + system from /usr/bin/time; the sound's cost is the difference
# of the medians.
#
#   benches/guest-audio-cost.sh [RUNS]    release build, RUNS rounds (default 3)
#   benches/guest-audio-cost.sh --smoke   one round of a 3 s clip (benches/smoke.sh
#                                         runs this: tests/guest_bench.rs)
#
# REEL_BIN: the reel binary to measure (default: a release build made here).
# The runs stay in target/vm-runs/bench-audio-DATE/.
set -eu
project=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --smoke ]; then
    runs=1 seconds=3
else
    runs=${1:-3} seconds=10
fi
clip=$project/target/bench-media/audio/h264_aac_320x240_${seconds}s.mp4
mkdir -p "$(dirname "$clip")"
if [ ! -e "$clip" ]; then
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=320x240:rate=25" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000" -ac 2 -t "$seconds" \
        -c:v libx264 -profile:v main -bf 2 -g 50 -pix_fmt yuv420p -c:a aac -b:a 128k \
        "$clip.tmp.mp4"
    mv "$clip.tmp.mp4" "$clip"
fi
reel=${REEL_BIN:-}
if [ -z "$reel" ]; then
    (cd "$project" && cargo build --release --locked --bin reel >&2)
    reel=$project/target/release/reel
fi
dir=${REEL_BENCH_DIR:-$project/target/vm-runs/bench-audio-$(date -u +%Y%m%d-%H%M%S)}
"$project/tests/vm/run.sh" --dir "$dir" --timeout $((300 + 4 * runs * (seconds + 20))) \
    --audio --module visl --module snd_intel8x0 -- \
    "$project/benches/guest/audio-cost.sh" "$reel" "$runs" "$clip"
rc=$(cat "$dir/exit_code")
if [ "$rc" != 0 ]; then
    echo "guest-audio-cost: the guest script failed ($rc); its stderr:" >&2
    cat "$dir/stderr" >&2
    exit 1
fi
out=$dir/out
fail=0
for f in "$out"/*.rc; do
    if [ "$(cat "$f")" != 0 ]; then
        echo "$(basename "$f" .rc) failed:" >&2
        tail -5 "${f%.rc}.log" >&2
        fail=1
    fi
done
# The sound really went out: reel opened the card and said nothing of
# playing without it; every run took the clip's time (real time).
for f in "$out"/reel-sound.*.log; do
    if ! grep -q "audio output" "$f" || grep -q -i "without sound" "$f"; then
        echo "$(basename "$f" .log): no sound output:" >&2
        grep -i "sound\|audio" "$f" | head -5 >&2
        fail=1
    fi
done
[ "$fail" = 0 ] || exit 1
python3 - "$out" "$runs" "$seconds" <<'PY'
import statistics, sys
out, runs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def times(label):
    rows = [open(f"{out}/{label}.{i}.time").read().split() for i in range(1, runs + 1)]
    walls = [float(r[0]) for r in rows]
    if min(walls) < 0.9 * seconds:
        sys.exit(f"{label}: a run took {min(walls)} s, not real time ({seconds} s)")
    return statistics.median(float(r[1]) + float(r[2]) for r in rows)
t = {l: times(l) for l in ["reel-sound", "reel-silent", "gst-sound", "gst-silent"]}
reel, gst = t["reel-sound"] - t["reel-silent"], t["gst-sound"] - t["gst-silent"]
print("| player | CPU with sound | without | sound's cost |")
print("|---|---|---|---|")
print(f"| reel | {t['reel-sound']:.2f} s | {t['reel-silent']:.2f} s | {reel:.2f} s |")
print(f"| gst-launch (v4l2slh264dec, avdec_aac, alsasink) | {t['gst-sound']:.2f} s | {t['gst-silent']:.2f} s | {gst:.2f} s |")
ratio = f"{reel / gst:.2f}x" if gst > 0 else "n/a (GStreamer's difference is not positive)"
print(f"reel's sound costs {ratio} GStreamer's (medians of {runs} rounds, {seconds:.0f} s clip, guest CPU)")
PY
echo "(runs in $dir)"
