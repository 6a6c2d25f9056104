#!/bin/sh
# (in the guest, sourced) reel playbacks on weston 14 headless (GL renderer
# on llvmpipe, kiosk shell), for zerocopy.sh, hevc-play.sh and fwht-play.sh.
# Sets no shell options; needs R (the result directory).
#
# start_weston NAME WIDTH HEIGHT: a fresh weston (weston 14's kiosk shell
#   segfaults now and then when a client connects right after another one
#   left) with an output of WIDTHxHEIGHT, scopes log and proto in
#   $R/weston-NAME.log, what wayland-info saw in $R/wayland-info-NAME.txt;
#   sets WESTON (its pid) and exports WAYLAND_DISPLAY. Exits 3 when weston
#   does not come up.
# play NAME REEL WIDTH HEIGHT [REEL OPTIONS...] FILE...: one playback in its
#   own weston, `REEL --stats --loop --hwdec v4l2 -vv --osd-level 0 OPTIONS FILE...`
#   (no OSD over the picture the screenshot is compared by), until
#   more frames were presented than decoder buffers imported (some buffer
#   shown twice; at most 60 s), then shot_and_stop: NAME.out, NAME.log,
#   NAME.rc, NAME-shot/. With PLAY_STRACE=1, strace follows reel from just
#   after its start (its open, close and ioctl calls, every thread) into
#   NAME.strace. With PLAY_EPOCHS=N, it also waits until frames of N
#   epochs (loops) were on screen.
# shot_and_stop NAME PID WESTON_PID: waits until reel (PID, logging to
#   $R/NAME.log at -vv) has presented a frame, lists what its buffers are
#   (fd_kinds) in $R/NAME.fds, takes a weston screenshot into
#   $R/NAME-shot/, stops reel with SIGTERM (it prints its stats and exits),
#   writes its exit status to $R/NAME.rc, then stops weston.
# fd_kinds PID: a line per dmabuf fd of PID, "dmabuf EXPORTER" (its
#   fdinfo's exp_name), and per memfd, "memfd NAME".
start_weston() {
    weston --backend=headless --renderer=gl --shell=kiosk --debug --logger-scopes=log,proto --idle-time=0 \
        --refresh-rate=1000000 --width="$2" --height="$3" --socket="wl-$1" >"$R/weston-$1.log" 2>&1 &
    WESTON=$!
    export WAYLAND_DISPLAY="wl-$1"
    weston_tries=0
    until wayland-info >"$R/wayland-info-$1.txt" 2>&1 && grep -q xdg_wm_base "$R/wayland-info-$1.txt"; do
        weston_tries=$((weston_tries + 1))
        if [ $weston_tries -gt 600 ]; then
            echo "weston did not come up"
            cat "$R/weston-$1.log"
            exit 3
        fi
        sleep 0.2
    done
}

play() {
    play_name=$1
    play_reel=$2
    start_weston "$play_name" "$3" "$4"
    shift 4
    "$play_reel" --stats --loop --hwdec v4l2 -vv --osd-level 0 "$@" >"$R/$play_name.out" 2>"$R/$play_name.log" &
    play_pid=$!
    if [ "${PLAY_STRACE:-}" = 1 ]; then
        strace -f -qq -p "$play_pid" -e trace=openat,close,ioctl -o "$R/$play_name.strace" \
            2>"$R/$play_name.strace-log" &
    fi
    # On a loaded machine a 2 s window may present fewer frames than the
    # decoder has buffers, and the checks of buffer reuse see none.
    # A deadline, not a count of tries: on a loaded guest each look through
    # a long -vv log takes seconds.
    play_deadline=$(($(date +%s) + 60))
    while [ "$(grep -c 'frame presented' "$R/$play_name.log")" -le \
        "$(grep -c 'decoder dmabuf imported' "$R/$play_name.log")" ] ||
        [ "$(sed -n 's/.*frame on screen epoch=\([0-9]*\).*/\1/p' "$R/$play_name.log" | sort -u | wc -l)" \
            -lt "${PLAY_EPOCHS:-0}" ]; do
        [ "$(date +%s)" -ge "$play_deadline" ] && break
        kill -0 "$play_pid" 2>/dev/null || break
        sleep 0.2
    done
    shot_and_stop "$play_name" "$play_pid" "$WESTON"
}

fd_kinds() {
    # An fd may close (or reel end) between the listing and the look: its
    # line is left out (the callers run under set -e).
    for fd in /proc/"$1"/fd/*; do
        exporter=$(sed -n 's/^exp_name:[[:space:]]*//p' "/proc/$1/fdinfo/${fd##*/}" 2>/dev/null) || continue
        if [ -n "$exporter" ]; then
            echo "dmabuf $exporter"
            continue
        fi
        target=$(readlink "$fd" 2>/dev/null) || continue
        case $target in
        /memfd:*) echo "memfd ${target#/memfd:}" ;;
        esac
    done
}

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
    fd_kinds "$shot_pid" >"$R/$shot_name.fds"
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
