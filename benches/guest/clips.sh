#!/bin/sh
# (on the host) the benchmarks' clips, made once each with ffmpeg and
# kept: H.264 main with B-frames (testsrc2, 25 fps, a keyframe every 50),
# for each size a NAME.long.mp4 of LONG frames and a NAME.short.mp4 of SHORT
# frames of the same picture. Prints their paths.
#
#   clips.sh DIR LONG SHORT SIZE...
set -eu
media=$1 long=$2 short=$3
shift 3
mkdir -p "$media"

# encode SIZE FRAMES KIND: testsrc2 at 25 fps, H.264 main with B-frames, once.
encode() {
    out="$media/h264_$1.$3.mp4"
    if [ ! -e "$out" ]; then
        ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$1:rate=25" -frames:v "$2" \
            -c:v libx264 -profile:v main -bf 2 -g 50 -pix_fmt yuv420p "$media/partial.mp4"
        mv "$media/partial.mp4" "$out"
    fi
    echo "$out"
}
for size in "$@"; do
    encode "$size" "$long" long
    encode "$size" "$short" short
done
