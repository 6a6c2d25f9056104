#!/bin/sh
# (in the guest, sourced) shot_and_stop NAME PID WESTON_PID: waits until
# reel (PID, logging to $R/NAME.log at -vv) has presented a frame, takes a
# weston screenshot into $R/NAME-shot/, stops reel with SIGTERM (it prints
# its stats and exits), writes its exit status to $R/NAME.rc, then stops
# weston. Sourced by zerocopy.sh and fwht-play.sh; sets no shell options.
shot_and_stop() {
    shot_name=$1
    shot_pid=$2
    shot_weston=$3
    i=0
    until grep -q 'frame presented' "$R/$shot_name.log"; do
        i=$((i + 1))
        [ $i -gt 600 ] && break
        kill -0 "$shot_pid" 2>/dev/null || break
        sleep 0.2
    done
    sleep 2
    mkdir -p "$R/$shot_name-shot"
    (cd "$R/$shot_name-shot" && XDG_PICTURES_DIR="$R/$shot_name-shot" timeout 60 weston-screenshooter) \
        >"$R/$shot_name-shot.log" 2>&1 || true
    kill -TERM "$shot_pid" 2>/dev/null || true
    timeout 60 sh -c "while kill -0 $shot_pid 2>/dev/null; do sleep 0.1; done" || true
    shot_rc=0
    wait "$shot_pid" || shot_rc=$?
    echo "$shot_rc" >"$R/$shot_name.rc"
    kill "$shot_weston" 2>/dev/null || true
    wait "$shot_weston" 2>/dev/null || true
}
