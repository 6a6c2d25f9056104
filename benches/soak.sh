#!/bin/sh
# The long soak: reel's player on weston 14 headless in the test guest
# (visl, zero-copy), `--loop` over a playlist of three codecs and sizes for
# SECONDS (default an hour), sampled once per loop (RSS, fds, dmabufs,
# V4L2 mappings, wl_buffers: tests/vm/guest/reel-watch.py soak), then the
# summary of the samples. tests/guest_faults.rs runs a two-minute one in
# CI; BENCHMARKS.md records results of this one.
#
#   REEL_VM_CACHE=... benches/soak.sh [SECONDS]
#
# The samples stay in target/vm-runs/soak-DATE/out/soak.samples.
set -eu
project=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-3600}
media=$project/target/bench-media/soak
mkdir -p "$media"

# encode NAME SIZE ENCODER OPTIONS...: 5 s of testsrc2 at 25 fps, once.
encode() {
    name=$1
    size=$2
    shift 2
    if [ ! -e "$media/$name" ]; then
        ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$size:rate=25:duration=5" \
            "$@" -pix_fmt yuv420p "$media/partial-$name"
        mv "$media/partial-$name" "$media/$name"
    fi
}
encode h264_854x480.mkv 854x480 -c:v libx264 -g 25 -bf 2
encode hevc_320x240.mkv 320x240 -c:v libx265 -x265-params keyint=25:log-level=error
encode vp9_640x360.webm 640x360 -c:v libvpx-vp9 -g 25 -deadline realtime

(cd "$project" && cargo build --bins --quiet)
dir=$project/target/vm-runs/soak-$(date -u +%Y%m%d-%H%M%S)
"$project/tests/vm/run.sh" --dir "$dir" --timeout $((seconds + 600)) -- \
    "$project/tests/vm/guest/faults-play.sh" soak soak "$project/target/debug/reel" "$seconds" \
    "$media/h264_854x480.mkv" "$media/hevc_320x240.mkv" "$media/vp9_640x360.webm"
echo "reel exit status: $(cat "$dir/out/soak.rc")"
tail -n 1 "$dir/out/soak.log"
python3 "$project/tests/vm/guest/reel-watch.py" summary "$dir/out/soak.samples"
