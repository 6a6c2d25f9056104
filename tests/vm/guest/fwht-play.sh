#!/bin/sh
# (in the guest, vicodec loaded) reel decoding an FWHT stream through
# vicodec's stateless decoder, for tests/guest_fwht.rs. In $REEL_RESULTS:
# - NAME.md5 / NAME.md5.log: `reel --stats --hwdec v4l2 --output framemd5 FILE`;
# - NAME-seek.md5 / .log: the same from START seconds on;
# - two playbacks in weston 14 headless (GL renderer on llvmpipe, kiosk
#   shell, an output of the clip's WIDTHxHEIGHT, protocol log on), each
#   `reel --stats --hwdec v4l2 -vv` until a frame is presented, 2 s more,
#   a screenshot (PLAY-shot/), then SIGTERM: PLAY = NAME-loop (`--loop`)
#   and NAME-paused (`--paused --start START`); PLAY.out, PLAY.log,
#   PLAY.rc, weston-PLAY.log; not with PLAYBACK `no-play`.
#
#   tests/vm/guest/fwht-play.sh REEL NAME FILE WIDTHxHEIGHT START play|no-play
set -eu
reel=$1
name=$2
file=$3
width=${4%x*}
height=${4#*x}
start=$5
playback=$6
R=$REEL_RESULTS
. "$(dirname "$0")/reel-shot.sh"

rc=0
"$reel" --stats --hwdec v4l2 --output framemd5 "$file" >"$R/$name.md5" 2>"$R/$name.md5.log" || rc=$?
echo "$rc" >"$R/$name.md5.rc"
rc=0
"$reel" --stats --hwdec v4l2 --output framemd5 --start "$start" "$file" >"$R/$name-seek.md5" \
    2>"$R/$name-seek.md5.log" || rc=$?
echo "$rc" >"$R/$name-seek.md5.rc"
[ "$playback" = play ] || exit 0

XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
# play PLAY [REEL OPTIONS...]: one playback in a fresh weston (weston 14's
# kiosk shell segfaults now and then when a client follows another).
play() {
    play=$1
    shift
    weston --backend=headless --renderer=gl --shell=kiosk --debug --logger-scopes=log,proto \
        --idle-time=0 --refresh-rate=1000000 --width="$width" --height="$height" \
        --socket="wl-$play" >"$R/weston-$play.log" 2>&1 &
    weston=$!
    export WAYLAND_DISPLAY="wl-$play"
    i=0
    until wayland-info 2>/dev/null | grep -q xdg_wm_base; do
        i=$((i + 1))
        if [ $i -gt 600 ]; then
            echo "weston did not come up"
            cat "$R/weston-$play.log"
            exit 3
        fi
        sleep 0.2
    done
    "$reel" --stats --hwdec v4l2 -vv "$@" "$file" >"$R/$play.out" 2>"$R/$play.log" &
    pid=$!
    shot_and_stop "$play" "$pid" "$weston"
}
play "$name-loop" --loop
play "$name-paused" --paused --start "$start"
