#!/bin/sh
# (in the guest, vicodec loaded) reel decoding an FWHT stream through
# vicodec's stateless decoder, for tests/guest_fwht.rs. In $REEL_RESULTS:
# - NAME.md5 / NAME.md5.log: `reel --stats --hwdec v4l2 --output framemd5 FILE`;
# - NAME-seek.md5 / .log: the same from START seconds on;
# - NAME.raw / .raw.log / .raw.rc: `reel --hwdec v4l2 --output raw FILE`;
# - two playbacks in weston 14 headless (GL renderer on llvmpipe, kiosk
#   shell, an output of the clip's WIDTHxHEIGHT, protocol log on), each
#   `reel --stats --hwdec v4l2 -vv` until a frame is presented, 2 s more,
#   a screenshot (PLAY-shot/), then SIGTERM: PLAY = NAME-loop (`--loop`)
#   and NAME-paused (`--paused --start START`); PLAY.out, PLAY.log,
#   PLAY.rc, weston-PLAY.log; not with PLAYBACK `no-play`. With LOOP_UNTIL,
#   the `--loop` playback first goes on until its log has a line with that
#   text (at most 120 s: a loaded guest drops most frames as late, and
#   decodes slowly).
#
#   tests/vm/guest/fwht-play.sh REEL NAME FILE WIDTHxHEIGHT START play|no-play [LOOP_UNTIL]
set -eu
reel=$1
name=$2
file=$3
width=${4%x*}
height=${4#*x}
start=$5
playback=$6
loop_until=${7:-}
R=$REEL_RESULTS
. "$(dirname "$0")/reel-shot.sh"

rc=0
"$reel" --stats --hwdec v4l2 --output framemd5 "$file" >"$R/$name.md5" 2>"$R/$name.md5.log" || rc=$?
echo "$rc" >"$R/$name.md5.rc"
rc=0
"$reel" --stats --hwdec v4l2 --output framemd5 --start "$start" "$file" >"$R/$name-seek.md5" \
    2>"$R/$name-seek.md5.log" || rc=$?
echo "$rc" >"$R/$name-seek.md5.rc"
rc=0
"$reel" --hwdec v4l2 --output raw --output-file "$R/$name.raw" "$file" 2>"$R/$name.raw.log" || rc=$?
echo "$rc" >"$R/$name.raw.rc"
[ "$playback" = play ] || exit 0

XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
# fwht_play PLAY [REEL OPTIONS...]: one playback in a fresh weston.
fwht_play() {
    play=$1
    shift
    start_weston "$play" "$width" "$height"
    "$reel" --stats --hwdec v4l2 -vv --osd-level 0 "$@" "$file" >"$R/$play.out" 2>"$R/$play.log" &
    pid=$!
    if [ "$play" = "$name-loop" ] && [ -n "$loop_until" ]; then
        deadline=$(($(date +%s) + 120))
        until grep -qF "$loop_until" "$R/$play.log"; do
            [ "$(date +%s)" -ge "$deadline" ] && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
    fi
    shot_and_stop "$play" "$pid" "$WESTON"
}
fwht_play "$name-loop" --loop
fwht_play "$name-paused" --paused --start "$start"
