#!/bin/sh
# (in the guest) one clip with mid-stream resolution changes through reel's
# V4L2 path, for tests/guest_resolution_change.rs. In $REEL_RESULTS:
# - NAME.md5, NAME.md5.log, NAME.md5.rc: `REEL --stats --hwdec v4l2 --output
#   framemd5 FILE` (at most 120 s);
# - with SEEK (seconds, a time in the clip's last segment; `-` for none): a
#   session on weston 14 headless (320x240, protocol log in
#   weston-NAME.log), `REEL --stats --paused --hwdec v4l2 -vv --osd-level 0
#   --control SOCKET FILE` driven by reel-session.py: the first picture
#   shown (NAME.session), a snapshot of what reel holds (reel-watch.py,
#   NAME.before), `resume` until the position passed PLAY_TO seconds (the
#   first change played through), `pause`, `seek SEEK` while paused, the
#   picture shown after it, a second (weston lets the old buffers go), a
#   snapshot (NAME.after), `quit`: NAME.out, NAME.log, NAME.rc.
#
#   tests/vm/guest/resolution-change.sh REEL NAME FILE SEEK PLAY_TO
set -eu
reel=$1
name=$2
file=$3
seek=$4
play_to=$5
R=$REEL_RESULTS
here=$(dirname "$0")
. "$here/reel-shot.sh"

rc=0
timeout 120 "$reel" --stats --hwdec v4l2 --output framemd5 "$file" >"$R/$name.md5" 2>"$R/$name.md5.log" || rc=$?
echo "$rc" >"$R/$name.md5.rc"
[ "$seek" = - ] && exit 0

XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
socket=$XDG_RUNTIME_DIR/$name.sock
session() {
    timeout 150 python3 "$here/reel-session.py" "$socket" "$@" >>"$R/$name.session" 2>&1 || true
}
start_weston "$name" 320 240
"$reel" --stats --paused --hwdec v4l2 -vv --osd-level 0 --control "$socket" "$file" \
    >"$R/$name.out" 2>"$R/$name.log" &
pid=$!
: >"$R/$name.session"
session shown sleep:1
python3 "$here/reel-watch.py" snapshot "$pid" "$R/$name.before" || true
session resume "until:position>$play_to" pause "seek $seek" shown sleep:1
python3 "$here/reel-watch.py" snapshot "$pid" "$R/$name.after" || true
session status quit
timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.1; done" || kill -KILL "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
echo "$rc" >"$R/$name.rc"
kill "$WESTON" 2>/dev/null || true
wait "$WESTON" 2>/dev/null || true
