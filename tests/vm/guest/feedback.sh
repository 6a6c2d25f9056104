#!/bin/sh
# (in the guest) reel against weston 14's DRM backend on vkms
# (weston-drm.sh), for tests/guest_feedback.rs. In $REEL_RESULTS:
#
# 1. weston with the kiosk shell and the proto scope (weston-feedback.log):
#    dri-nodes.txt (each DRM node: NAME MAJOR MINOR, decimal),
#    wayland-info.txt/.rc, `reel probe CLIP` as probe.txt/.log/.rc, then
#    `reel --stats --loop --fullscreen --hwdec v4l2 -vv CLIP` as
#    reel.out/.log/.pid/.rc: it plays until weston has re-sent the
#    surface's dmabuf feedback (the view failed to go on a plane for 2 s),
#    3 s more to re-negotiate, then gets SIGTERM.
# 2. weston with the desktop shell (weston-switch.log; if it does not
#    start: switch-weston.failed): reel windowed with --control, as
#    switch-reel.out/.log/.pid/.rc; after weston's re-send, three phases
#    (windowed, fullscreen, windowed-again) switched by `fullscreen on` and
#    `fullscreen off` through the control socket (replies in
#    switch-on.txt, switch-off.txt). Each phase waits until `status` shows
#    the state, then lasts 5 s (more than weston's 2 s before it re-sends a
#    surface's feedback); `status` at its start and end is saved as
#    switch-status-PHASE-start.txt and -end.txt.
#
#   tests/vm/guest/feedback.sh REEL CLIP
set -eu
here=$(cd "$(dirname "$0")" && pwd)
reel=$1
clip=$2
R=$REEL_RESULTS
resends='Need to update and resend the dma-buf feedback'
. "$here/weston-drm.sh"

# Waits (at most 30 s) until weston's log LOG says it re-sent a surface's
# feedback, or process PID is gone.
wait_for_resend() {
    i=0
    until grep -q "$resends" "$1"; do
        i=$((i + 1))
        [ $i -gt 150 ] && break
        kill -0 "$2" 2>/dev/null || break
        sleep 0.2
    done
}

# Stops reel (PID) with SIGTERM and saves its exit status to FILE.
stop_reel() {
    kill -TERM "$1" 2>/dev/null || true
    timeout 60 sh -c "while kill -0 $1 2>/dev/null; do sleep 0.1; done" || true
    rc=0
    wait "$1" || rc=$?
    echo "$rc" >"$2"
}

WESTON_DRM_SCOPES=log,drm-backend,proto weston_drm_start feedback || exit 3
for n in /dev/dri/*; do
    if [ -c "$n" ]; then echo "$(basename "$n") $(stat -c '%t %T' "$n")"; fi
done | while read -r name maj min; do echo "$name $((0x$maj)) $((0x$min))"; done >"$R/dri-nodes.txt"
rc=0
wayland-info >"$R/wayland-info.txt" 2>&1 || rc=$?
echo "$rc" >"$R/wayland-info.rc"
rc=0
"$reel" probe "$clip" >"$R/probe.txt" 2>"$R/probe.log" || rc=$?
echo "$rc" >"$R/probe.rc"
"$reel" --stats --loop --fullscreen --hwdec v4l2 -vv "$clip" >"$R/reel.out" 2>"$R/reel.log" &
pid=$!
echo $pid >"$R/reel.pid"
wait_for_resend "$R/weston-feedback.log" $pid
sleep 3
stop_reel $pid "$R/reel.rc"
weston_drm_stop

S=$XDG_RUNTIME_DIR/reel-switch.sock
ctl() { python3 "$here/reel-control.py" "$S" "$1"; }
# phase NAME STATE: waits (at most 20 s) for STATE (fullscreen=true|false)
# in the status, snapshots it at the start and at the end of the phase.
phase() {
    i=0
    until ctl status >"$R/switch-status-$1-start.txt" && grep -q "$2" "$R/switch-status-$1-start.txt"; do
        i=$((i + 1))
        [ $i -gt 100 ] && break
        sleep 0.2
    done
    sleep 5
    ctl status >"$R/switch-status-$1-end.txt" || true
}
if WESTON_DRM_SHELL=desktop WESTON_DRM_SCOPES=log,drm-backend,proto weston_drm_start switch; then
    "$reel" --stats --loop --hwdec v4l2 --control "$S" -vv "$clip" >"$R/switch-reel.out" 2>"$R/switch-reel.log" &
    pid=$!
    echo $pid >"$R/switch-reel.pid"
    # Windowed: until weston has re-sent the surface feedback (it does for a
    # window too), then as any phase.
    wait_for_resend "$R/weston-switch.log" $pid
    phase windowed fullscreen=false
    ctl 'fullscreen on' >"$R/switch-on.txt" || true
    phase fullscreen fullscreen=true
    ctl 'fullscreen off' >"$R/switch-off.txt" || true
    phase windowed-again fullscreen=false
    stop_reel $pid "$R/switch-reel.rc"
    weston_drm_stop
else
    echo "weston (desktop shell) did not start" >"$R/switch-weston.failed"
fi
