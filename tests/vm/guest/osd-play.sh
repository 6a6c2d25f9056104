#!/bin/sh
# (in the guest) reel's OSD and screenshots on the V4L2 path (visl),
# presented zero-copy to weston 14 headless (640x480: the 320x240 clip
# scaled twice), for tests/guest_zerocopy.rs. In $REEL_RESULTS:
# - the playback: `reel --hwdec v4l2 -vv --paused --osd-level 0` (osd.log,
#   weston-osd.log with scope proto), driven by reel-session.py in three
#   sessions with a weston screenshot after each: osd-seek (`osd 3`,
#   `seek 2`), osd-step (`step`), osd-plain (`osd 0`, reel's `screenshot`
#   into osd-pictures/, the status); NAME.session and NAME-shot/ each;
#   with SUBS, a subtitle file shown too (`--sub-file`).
#
#   tests/vm/guest/osd-play.sh REEL CLIP [SUBS]
set -eu
reel=$1
clip=$2
subs=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
R=$REEL_RESULTS
. "$here/reel-shot.sh"

XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
start_weston osd 640 480
socket="$XDG_RUNTIME_DIR/osd.sock"
mkdir -p "$R/osd-pictures"
set --
[ -n "$subs" ] && set -- --sub-file "$subs"
XDG_PICTURES_DIR="$R/osd-pictures" "$reel" --stats --hwdec v4l2 -vv --paused --osd-level 0 \
    --control "$socket" "$@" "$clip" >"$R/osd.out" 2>"$R/osd.log" &
pid=$!

# step NAME SESSION-STEP...: one reel-session.py session, then a screenshot.
step() {
    name=$1
    shift
    session_rc=0
    timeout 300 python3 "$here/reel-session.py" "$socket" "$@" >"$R/$name.session" 2>&1 || session_rc=$?
    echo "$session_rc" >"$R/$name.session.rc"
    mkdir -p "$R/$name-shot"
    (cd "$R/$name-shot" && XDG_PICTURES_DIR="$R/$name-shot" timeout 60 weston-screenshooter) \
        >"$R/$name-shot.log" 2>&1 || true
}
step osd-seek shown "osd 3" "seek 2" shown sleep:1
step osd-step step "until:position>2.03" sleep:1
step osd-plain "osd 0" sleep:1 screenshot status
timeout 60 python3 "$here/reel-session.py" "$socket" quit >"$R/osd-quit.session" 2>&1 \
    || kill -TERM "$pid" 2>/dev/null || true
timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.1; done" || kill -KILL "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
echo "$rc" >"$R/osd.rc"
kill "$WESTON" 2>/dev/null || true
wait "$WESTON" 2>/dev/null || true
