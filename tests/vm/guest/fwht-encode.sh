#!/bin/sh
# (in the guest, vicodec loaded) FWHT test media: encodes raw 4:2:0 clips
# with vicodec's stateful encoder into raw FWHT streams (frames with their
# headers, back to back) and decodes them back twice, for
# tests/guest_fwht.rs. For each NAME:WxH:GOP:YUV, in $REEL_RESULTS:
# - NAME.fwht: the stream, an I frame every GOP frames;
# - NAME.ref.yuv: vicodec's stateful decoder's frames (visible size);
# - NAME.sl.yuv: the stateless decoder's frames, driven by v4l2-ctl (empty
#   for frames larger than 1280x720: v4l2-ctl leaves the CAPTURE size at
#   vicodec's default, which refuses them);
# - NAME.log: v4l2-ctl's output.
#
#   tests/vm/guest/fwht-encode.sh NAME:WxH:GOP:YUV...
set -eu
R=$REEL_RESULTS

# node FOURCC: the vicodec node whose OUTPUT queue takes FOURCC.
node() {
    for dev in /dev/video*; do
        v4l2-ctl -d "$dev" --info 2>/dev/null | grep -q 'Driver name *: vicodec' || continue
        if v4l2-ctl -d "$dev" --list-formats-out | grep -q "'$1'"; then
            echo "$dev"
            return
        fi
    done
    echo "no vicodec node takes $1" >&2
    exit 2
}
encoder=$(node YU12)
stateful=$(node FWHT)
stateless=$(node SFWH)
echo "encoder $encoder, stateful decoder $stateful, stateless decoder $stateless"

for spec in "$@"; do
    name=${spec%%:*}
    rest=${spec#*:}
    size=${rest%%:*}
    rest=${rest#*:}
    gop=${rest%%:*}
    yuv=${rest#*:}
    width=${size%x*}
    height=${size#*x}
    frames=$(($(stat -c %s "$yuv") / (width * height * 3 / 2)))
    # The driver rounds the coded size up to 16 (4:2:0 planes of whole 8x8
    # blocks); the crop is the visible size the headers carry.
    v4l2-ctl -d "$encoder" -c video_gop_size="$gop" \
        --set-fmt-video-out=width="$width",height="$height",pixelformat=YU12 \
        --set-selection-output=target=crop,width="$width",height="$height" \
        --stream-mmap --stream-out-mmap --stream-from="$yuv" --stream-to="$R/$name.fwht" \
        --stream-count="$frames" >"$R/$name.log" 2>&1
    v4l2-ctl -d "$stateful" --set-fmt-video=pixelformat=YU12 --stream-mmap --stream-out-mmap \
        --stream-from="$R/$name.fwht" --stream-to="$R/$name.ref.yuv" >>"$R/$name.log" 2>&1
    v4l2-ctl -d "$stateless" --set-fmt-video=pixelformat=YU12 --stream-mmap --stream-out-mmap \
        --stream-from="$R/$name.fwht" --stream-to="$R/$name.sl.yuv" >>"$R/$name.log" 2>&1
    echo "$name: $frames frames of ${width}x$height, $(stat -c %s "$R/$name.fwht") bytes"
done
