#!/bin/sh
# (in the guest) reel presenting visl's pictures to weston 14 headless (GL
# renderer on llvmpipe, kiosk shell, an output of WIDTHxHEIGHT), for
# tests/guest_zerocopy.rs. In $REEL_RESULTS:
# - the oracles: GStreamer's first picture of CLIP and of ODD_CLIP through
#   visl (v4l2slh264dec) as oracle.png and oracle-odd.png (.log, .rc);
# - six playbacks, NAME: zerocopy (CLIP), copy (CLIP with --copy), odd
#   (ODD_CLIP at --speed 0.5, until frames of four loops were shown), crop (CLIP with --video-crop 160x120+120+100 on a
#   schedule begun 10 s before: --sync-epoch), reschange (RESCHANGE_CLIP),
#   tiled (CLIP with visl
#   offering only NV12_32L32: capture_tiled=1). Each has its own weston
#   (weston-NAME.log, scopes log and proto) and runs
#   `reel --stats --loop --hwdec v4l2 -vv` until a frame is presented, 2 s
#   more, a screenshot (NAME-shot/, NAME-shot.log), then SIGTERM:
#   NAME.out, NAME.log, NAME.rc; reschange under strace too (NAME.strace:
#   when the old session's file is closed), with visl's CAPTURE memory
#   bounded to RESCHANGE_CAPTURE_KIB (environment) KiB.
#
#   RESCHANGE_CAPTURE_KIB=N tests/vm/guest/zerocopy.sh REEL WIDTHxHEIGHT CLIP ODD_CLIP RESCHANGE_CLIP
set -eu
reel=$1
width=${2%x*}
height=${2#*x}
clip=$3
odd=$4
reschange=$5
R=$REEL_RESULTS
. "$(dirname "$0")/reel-shot.sh"
export GST_REGISTRY=/dev/shm/gst-registry.bin

# oracle NAME CLIP: GStreamer's first picture of CLIP through visl, as a PNG.
oracle() {
    rc=0
    timeout 120 gst-launch-1.0 -q filesrc location="$2" ! parsebin ! v4l2slh264dec \
        ! videoconvert ! video/x-raw,format=RGB ! pngenc snapshot=true ! filesink location="$R/$1.png" \
        >"$R/$1.log" 2>&1 || rc=$?
    echo "$rc" >"$R/$1.rc"
}
oracle oracle "$clip"
oracle oracle-odd "$odd"

XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
play zerocopy "$reel" "$width" "$height" "$clip"
play copy "$reel" "$width" "$height" --copy "$clip"
# Two whole loops after the first (whose start catches up): the pace test's.
PLAY_EPOCHS=4 play odd "$reel" "$width" "$height" --speed 0.5 "$odd"
play crop "$reel" "$width" "$height" --video-crop 160x120+120+100 \
    --sync-epoch "$(($(date +%s) - 10))" "$clip"
# Under a CAPTURE memory bound (a board's CMA pool) that the old and the
# new set of buffers would exceed together, not the new set and the
# buffers frames still hold.
"$(dirname "$0")/visl-reload.sh" capture_memory_max="${RESCHANGE_CAPTURE_KIB:?}"
PLAY_STRACE=1 play reschange "$reel" "$width" "$height" "$reschange"
# CAPTURE offered in cedrus's tiled layout only: weston imports no tiled
# modifier, so every frame is detiled into a copy buffer.
"$(dirname "$0")/visl-reload.sh" capture_tiled=1
play tiled "$reel" "$width" "$height" "$clip"
"$(dirname "$0")/visl-reload.sh"
