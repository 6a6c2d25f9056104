#!/bin/sh
# (in the test guest) builds of reel, and GStreamer, side by side into
# weston in one boot (benches/guest-ab.sh starts it): the before and after
# of a step, measured where the machine's drift between boots cannot tell
# them apart.
#
#   ab.sh RUNS CLIP... -- PLAYER...
#
# PLAYER is a reel binary (named by its file name) or `gst` (`... !
# v4l2slh264dec ! waylandsink`). Each CLIP (NAME.long.mp4 and
# NAME.short.mp4, as benches/guest-compare.sh makes them) is played RUNS
# rounds, the players in turn (the order rotates each round), each into a
# fresh weston (benches/guest/weston-bench.sh) under `/usr/bin/time`; then
# each player once under `strace -f -c`. File names as compare.sh's
# present runs (CLIP_BASE.present.PLAYER.RUN.time, .rc, .log, .weston;
# CLIP_BASE.PLAYER.present-count), so that benches/guest/summarise.py
# reads them.
set -eu
R=$REEL_RESULTS
here=$(cd "$(dirname "$0")" && pwd)
runs=$1
shift
clips=""
while [ "$1" != -- ]; do
    clips="$clips $1"
    shift
done
shift
players="$*"
XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
LIMIT=300

. "$here/weston-bench.sh"

name_of() {
    case $1 in
    gst) echo gst ;;
    *) basename "$1" ;;
    esac
}

# present NAME PLAYER CLIP PREFIX...: one run into a fresh weston, stderr
# in NAME.log, exit status in NAME.rc.
present() {
    name=$1 player=$2 clip=$3
    shift 3
    weston_up "$name"
    rc=0
    case $player in
    gst)
        timeout "$LIMIT" "$@" gst-launch-1.0 -q filesrc "location=$clip" ! qtdemux ! h264parse \
            ! v4l2slh264dec ! waylandsink >/dev/null 2>"$R/$name.log" || rc=$?
        ;;
    *) timeout "$LIMIT" "$@" "$player" --hwdec v4l2 --stats "$clip" >/dev/null 2>"$R/$name.log" || rc=$? ;;
    esac
    echo "$rc" >"$R/$name.rc"
    weston_down
}

"$here/../../tests/vm/guest/visl-reload.sh" draw_pictures=0

# Warm-up, untimed: GStreamer's plugin registry, the players' libraries in
# the page cache (read over 9p), weston's shaders for the players' buffers
# in Mesa's cache.
gst-inspect-1.0 v4l2slh264dec >"$R/gst-inspect.txt" 2>&1 || {
    echo "no v4l2slh264dec in the guest" >&2
    exit 3
}
for player in $players; do
    # shellcheck disable=SC2086
    present "warm-up.$(name_of "$player")" "$player" "$(echo $clips | cut -d' ' -f1)"
done

for clip in $clips; do
    base=$(basename "$clip" .mp4)
    i=1
    order=$players
    while [ $i -le "$runs" ]; do
        for player in $order; do
            p=$(name_of "$player")
            present "$base.present.$p.$i" "$player" "$clip" \
                /usr/bin/time -f %e:%U:%S:%M:%w -o "$R/$base.present.$p.$i.time"
        done
        # The first goes last next round.
        order="$(echo $order | cut -s -d' ' -f2-) $(echo $order | cut -d' ' -f1)"
        i=$((i + 1))
    done
    for player in $players; do
        p=$(name_of "$player")
        present "$base.$p.present-count" "$player" "$clip" strace -f -c -o "$R/$base.$p.present-count"
    done
done
