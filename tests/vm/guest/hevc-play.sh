#!/bin/sh
# (in the guest) HEVC through visl and reel's player, for
# tests/guest_zerocopy.rs (the same boot as zerocopy.sh). In $REEL_RESULTS:
# - hevc-capture-formats.txt: visl's CAPTURE formats once its OUTPUT is S265
#   (v4l2-ctl);
# - headless, traced (traced-run.sh; NAME.out/.log/.rc/.trace):
#   hevc-md5 (`--output framemd5` of OPEN_GOP from the start),
#   hevc-start-rasl (from RASL_T, just before the first leading picture) and
#   hevc-start-cra (from CRA_T, after a CRA the demuxer seeks to);
# - playbacks in weston (reel-shot.sh `play`: a screenshot, then SIGTERM):
#   hevc-zerocopy (MAIN), hevc-main10 (MAIN10);
# - sessions driven through the control socket (reel-session.py; the steps
#   and reel's replies in NAME.session, its exit status in NAME.session.rc,
#   reel's NAME.out/.log/.rc, weston-NAME.log): hevc-seek (OPEN_GOP, paused,
#   looping: seeks, steps, back, resume, pause), hevc-start (OPEN_GOP, paused,
#   `--start CRA_T`), hevc-playlist (`--loop MAIN RESCHANGE` until MAIN is
#   shown again), hevc-bit-depth (BIT_DEPTH_CHANGE until a frame after
#   1.3 s, in its second sequence, is shown).
#
#   tests/vm/guest/hevc-play.sh REEL WIDTHxHEIGHT MAIN MAIN10 OPEN_GOP RASL_T CRA_T RESCHANGE \
#       BIT_DEPTH_CHANGE
set -eu
reel=$1
width=${2%x*}
height=${2#*x}
main=$3
main10=$4
open_gop=$5
rasl_t=$6
cra_t=$7
reschange=$8
bit_depth_change=$9
here=$(cd "$(dirname "$0")" && pwd)
R=$REEL_RESULTS
. "$here/reel-shot.sh"

v4l2-ctl -d /dev/video0 --set-fmt-video-out pixelformat=S265 --list-formats \
    >"$R/hevc-capture-formats.txt" 2>&1

headless() { # NAME REEL OPTIONS...
    name=$1
    shift
    "$here/traced-run.sh" "$name" 120 "$reel" --hwdec v4l2 --stats -vv "$@"
}
headless hevc-md5 --output framemd5 "$open_gop"
headless hevc-start-rasl --output framemd5 --start "$rasl_t" "$open_gop"
headless hevc-start-cra --output framemd5 --start "$cra_t" "$open_gop"

XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
play hevc-zerocopy "$reel" "$width" "$height" "$main"
play hevc-main10 "$reel" "$width" "$height" "$main10"

# session NAME "REEL OPTIONS AND FILES" STEP...: reel in its own weston,
# driven by reel-session.py; reel is killed if the session failed.
session() {
    name=$1
    options=$2
    shift 2
    start_weston "$name" "$width" "$height"
    socket="$XDG_RUNTIME_DIR/$name.sock"
    # shellcheck disable=SC2086 # the options are words
    "$reel" --stats --hwdec v4l2 -vv --control "$socket" $options >"$R/$name.out" 2>"$R/$name.log" &
    pid=$!
    session_rc=0
    timeout 300 python3 "$here/reel-session.py" "$socket" "$@" >"$R/$name.session" 2>&1 || session_rc=$?
    echo "$session_rc" >"$R/$name.session.rc"
    [ "$session_rc" = 0 ] || kill -TERM "$pid" 2>/dev/null || true
    timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.1; done" || kill -KILL "$pid" 2>/dev/null || true
    rc=0
    wait "$pid" || rc=$?
    echo "$rc" >"$R/$name.rc"
    kill "$WESTON" 2>/dev/null || true
    wait "$WESTON" 2>/dev/null || true
}
session hevc-seek "--paused --loop $open_gop" shown \
    "seek 0.6" shown "seek $rasl_t" shown \
    step "until:position>0.44" step "until:position>0.47" back "until:position<0.49" \
    "seek 0.535" shown back "until:position<0.53" \
    "seek 0.1" shown resume "until:position>0.3" pause "until:state=paused" sleep:0.5 status quit
session hevc-start "--paused --start $cra_t $open_gop" shown quit
session hevc-playlist "--loop $main $reschange" "until:index=2/2" "until:width=480" "until:index=1/2" \
    "until:width=320" quit
session hevc-bit-depth "--loop $bit_depth_change" "until:position>1.3" quit
