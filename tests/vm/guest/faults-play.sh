#!/bin/sh
# (in the guest) reel's player on weston 14 headless (reel-shot.sh's
# start_weston) through visl, under faults and long use, for
# tests/guest_faults.rs. Each run saves in $REEL_RESULTS: NAME.out,
# NAME.log (reel's stderr), NAME.rc (its exit status) and:
#
# storm NAME REEL FILE SECONDS RATE SEED TARGET...: `reel --loop` of FILE
#   (RUST_LOG=reel=debug, no OSD: its buffers come and go with each seek's
#   text, and the snapshots must see the decoder's alone), then reel-watch.py's seek storm (NAME.storm);
#   NAME.before and NAME.after are snapshots of reel's fds, dmabufs and
#   mappings while playing, before the storm and once the last seek has
#   shown its frame; NAME.status is the status then.
# soak NAME REEL SECONDS FILE...: `reel --loop --osd-level 0` over the files
#   (-v; as the kiosk units run it: under TCG, weston's llvmpipe takes 5 to
#   10 s to repaint each time the OSD appears over a new file, and an
#   import waiting that long ends reel), sampled once per loop for SECONDS
#   (NAME.samples, reel-watch.py soak).
# kill-weston NAME REEL FILE: weston is killed (SIGKILL) once reel has
#   presented frames; NAME.exit-ms is the time from the kill until reel
#   ended (reel is killed after 10 s: a hang), NAME.killed-at the kill's
#   time of day (UTC, as reel's log stamps its lines), NAME.visl-refcnt
#   visl's module reference count once reel has ended.
# busy NAME REEL FILE: `sleep` holds /dev/video0 open (its pid in
#   NAME.holder) while reel, told that the node is busy
#   (REEL_FAULT_OPEN_BUSY, debug builds), decodes FILE with --hwdec v4l2
#   (NAME-v4l2.*) and --hwdec auto (NAME-auto.*), --output framemd5.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
R=$REEL_RESULTS
. "$here/reel-shot.sh"
XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
watch() { python3 "$here/reel-watch.py" "$@"; }
session() { python3 "$here/reel-session.py" "$@"; }

# stop NAME PID: quits reel, waits (SIGKILL after 60 s), writes NAME.rc,
# stops weston.
stop() {
    python3 "$here/reel-control.py" "$XDG_RUNTIME_DIR/$1.sock" quit >/dev/null 2>&1 || kill -TERM "$2" 2>/dev/null || true
    timeout 60 sh -c "while kill -0 $2 2>/dev/null; do sleep 0.1; done" || kill -KILL "$2" 2>/dev/null || true
    stop_rc=0
    wait "$2" || stop_rc=$?
    echo "$stop_rc" >"$R/$1.rc"
    kill "$WESTON" 2>/dev/null || true
    wait "$WESTON" 2>/dev/null || true
}

mode=$1
name=$2
reel=$3
shift 3
case $mode in
storm)
    file=$1
    seconds=$2
    rate=$3
    seed=$4
    shift 4
    start_weston "$name" 640 480
    RUST_LOG=reel=debug "$reel" --stats --loop --hwdec v4l2 --osd-level 0 --control "$XDG_RUNTIME_DIR/$name.sock" "$file" \
        >"$R/$name.out" 2>"$R/$name.log" &
    pid=$!
    session "$XDG_RUNTIME_DIR/$name.sock" "until:presented>20" >"$R/$name.session" 2>&1
    watch snapshot "$pid" "$R/$name.before"
    watch storm "$XDG_RUNTIME_DIR/$name.sock" "$seconds" "$rate" "$seed" "$R/$name.storm" "$@"
    session "$XDG_RUNTIME_DIR/$name.sock" shown sleep:1 >>"$R/$name.session" 2>&1
    watch snapshot "$pid" "$R/$name.after"
    python3 "$here/reel-control.py" "$XDG_RUNTIME_DIR/$name.sock" status >"$R/$name.status"
    stop "$name" "$pid"
    ;;
soak)
    seconds=$1
    shift
    start_weston "$name" 640 480
    "$reel" -v --stats --loop --hwdec v4l2 --osd-level 0 --control "$XDG_RUNTIME_DIR/$name.sock" "$@" \
        >"$R/$name.out" 2>"$R/$name.log" &
    pid=$!
    session "$XDG_RUNTIME_DIR/$name.sock" shown >"$R/$name.session" 2>&1
    watch soak "$XDG_RUNTIME_DIR/$name.sock" "$pid" "$seconds" "$R/$name.samples"
    stop "$name" "$pid"
    ;;
kill-weston)
    file=$1
    start_weston "$name" 640 480
    "$reel" -v --stats --loop --hwdec v4l2 --control "$XDG_RUNTIME_DIR/$name.sock" "$file" \
        >"$R/$name.out" 2>"$R/$name.log" &
    pid=$!
    session "$XDG_RUNTIME_DIR/$name.sock" "until:presented>10" >"$R/$name.session" 2>&1
    kill -KILL "$WESTON"
    killed=$(date +%s%N)
    date -u +%H:%M:%S.%N >"$R/$name.killed-at"
    while kill -0 "$pid" 2>/dev/null; do
        if [ $(($(date +%s%N) - killed)) -gt 10000000000 ]; then
            kill -KILL "$pid"
            break
        fi
        sleep 0.01
    done
    ended=$(date +%s%N)
    echo $(((ended - killed) / 1000000)) >"$R/$name.exit-ms"
    rc=0
    wait "$pid" || rc=$?
    echo "$rc" >"$R/$name.rc"
    # Every open file of visl's nodes holds the module: none left once
    # reel is gone means its buffers went with it.
    cat /sys/module/visl/refcnt >"$R/$name.visl-refcnt"
    wait "$WESTON" 2>/dev/null || true
    ;;
busy)
    file=$1
    sleep 100 </dev/video0 &
    holder=$!
    echo "$holder" >"$R/$name.holder"
    for hwdec in v4l2 auto; do
        rc=0
        REEL_FAULT_OPEN_BUSY=/dev/video0 timeout 120 "$reel" --hwdec "$hwdec" -v --output framemd5 "$file" \
            >"$R/$name-$hwdec.out" 2>"$R/$name-$hwdec.log" || rc=$?
        echo "$rc" >"$R/$name-$hwdec.rc"
    done
    kill "$holder"
    wait "$holder" 2>/dev/null || true
    ;;
*)
    echo "faults-play.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
