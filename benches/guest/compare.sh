#!/bin/sh
# (in the test guest) reel against GStreamer's v4l2codecs, both decoding
# H.264 through visl, in one boot (benches/guest-compare.sh starts it):
#
#   compare.sh REEL RUNS CLIP...
#
# Each CLIP is an MP4 named NAME.long.mp4 or NAME.short.mp4 (the same
# picture, fewer frames: start-up is separated from the steady state by the
# difference). For each clip, RUNS rounds, the players in turn (which goes
# first alternates), each run under `/usr/bin/time`:
# - decode: `reel --hwdec v4l2 --output null` vs `gst-launch-1.0 filesrc !
#   qtdemux ! h264parse ! v4l2slh264dec ! fakevideosink sync=false`
#   (fakevideosink: plain fakesink makes v4l2slh264dec copy every frame);
# - present: `reel --hwdec v4l2` vs `... ! waylandsink`, each into a
#   fresh weston 14 headless (GL renderer, 60 Hz, desktop shell) in real
#   time. The output is 160x90: under TCG weston's llvmpipe composites
#   that in a few milliseconds (commit to frame callback: 7 ms median),
#   so every frame reaches the screen and the players' steady state is
#   presenting every frame, as on a board. Larger outputs cost more than
#   their pixels: on some hosts 320x180 took 40 ms a repaint and both
#   players dropped a third of the frames; at 1920x1080 a repaint takes
#   about half a second and what is measured is mostly dropping. (Kiosk
#   shell would fit the video to the output, but waylandsink 1.22 then
#   sets a window geometry larger than the fullscreen size: a protocol
#   error.) weston runs with WAYLAND_DEBUG=server, so its log
#   (NAME.weston) shows every attach: the frames presented are counted
#   from it, and the time from the player's start to its first picture
#   on screen (the frame callback asked with its first buffer done) is
#   read from it.
# Each round also runs both players on the long clip under `strace -ttt
# -f -e trace=execve,ioctl` (time from exec to the first CAPTURE buffer
# dequeued: the first decoded picture). Then once per clip, player and
# mode under strace `-c -f` (syscall counts); and once under callgrind
# (instructions executed in user space, all threads: the same count
# whatever else loads the machine, where CPU seconds wander).
#
# visl is loaded with draw_pictures=0: drawing its test pattern into every
# picture is the CPU doing the decoder's work, which on a board the
# decoder's hardware does; left in, it lands in whichever process queues
# the request and swamps the players' own cost.
#
# In $REEL_RESULTS: CLIP_BASE.MODE.PLAYER.RUN.time ("wall:user:sys:
# maxrss_kb:voluntary_context_switches"), .log (stderr), .rc, and for
# present .weston (weston's log); CLIP_BASE.PLAYER.count and
# .present-count (strace -c), .first.RUN (strace -ttt),
# .instructions.log and .present-instructions.log (callgrind's summary),
# with .present-instructions.weston.
set -eu
R=$REEL_RESULTS
here=$(cd "$(dirname "$0")" && pwd)
reel=$1
runs=$2
shift 2
XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
LIMIT=300

# player_command PLAYER MODE CLIP: the command line, one word per line.
player_command() {
    case $1.$2 in
    reel.decode) printf '%s\n' "$reel" --hwdec v4l2 --output null "$3" ;;
    reel.present) printf '%s\n' "$reel" --hwdec v4l2 "$3" ;;
    gst.decode)
        printf '%s\n' gst-launch-1.0 -q filesrc "location=$3" ! qtdemux ! h264parse ! v4l2slh264dec \
            ! fakevideosink sync=false
        ;;
    gst.present)
        printf '%s\n' gst-launch-1.0 -q filesrc "location=$3" ! qtdemux ! h264parse ! v4l2slh264dec \
            ! waylandsink
        ;;
    esac
}

# run NAME PREFIX... -- PLAYER MODE CLIP: PREFIX then the player's command,
# stdout discarded, stderr in NAME.log, exit status in NAME.rc.
run() {
    name=$1
    shift
    prefix=""
    while [ "$1" != -- ]; do
        prefix="$prefix $1"
        shift
    done
    shift
    rc=0
    # The command's words contain no spaces (clip paths are ours).
    # shellcheck disable=SC2046,SC2086
    timeout "$LIMIT" $prefix $(player_command "$1" "$2" "$3") >/dev/null 2>"$R/$name.log" || rc=$?
    echo "$rc" >"$R/$name.rc"
}

# weston_up, weston_down: a fresh weston 14 headless per present run.
. "$here/weston-bench.sh"

# present NAME PREFIX... -- PLAYER CLIP: one run into a fresh weston.
present() {
    name=$1
    weston_up "$name"
    shift
    args=""
    while [ "$1" != -- ]; do
        args="$args $1"
        shift
    done
    # shellcheck disable=SC2086
    run "$name" $args -- "$2" present "$3"
    weston_down
}

"$here/../../tests/vm/guest/visl-reload.sh" draw_pictures=0

# Warm-up, untimed: GStreamer's first run builds its plugin registry
# ($GST_REGISTRY, seconds of CPU), and each player's libraries come into
# the page cache (the guest reads them over 9p).
gst-inspect-1.0 v4l2slh264dec >"$R/gst-inspect.txt" 2>&1 || {
    echo "no v4l2slh264dec in the guest" >&2
    exit 3
}
for player in reel gst; do
    run "warm-up.$player" -- "$player" decode "$1"
done

for clip in "$@"; do
    base=$(basename "$clip" .mp4)
    i=1
    while [ $i -le "$runs" ]; do
        if [ $((i % 2)) -eq 1 ]; then order="reel gst"; else order="gst reel"; fi
        for player in $order; do
            run "$base.decode.$player.$i" /usr/bin/time -f %e:%U:%S:%M:%w -o "$R/$base.decode.$player.$i.time" \
                -- "$player" decode "$clip"
        done
        case $base in
        *.long)
            for player in $order; do
                run "$base.$player.first.$i" strace -f -ttt --seccomp-bpf -e trace=execve,ioctl \
                    -o "$R/$base.$player.first.$i" -- "$player" decode "$clip"
            done
            ;;
        esac
        for player in $order; do
            present "$base.present.$player.$i" /usr/bin/time -f %e:%U:%S:%M:%w \
                -o "$R/$base.present.$player.$i.time" -- "$player" "$clip"
        done
        i=$((i + 1))
    done
    for player in reel gst; do
        run "$base.$player.count" strace -f -c -o "$R/$base.$player.count" -- "$player" decode "$clip"
        run "$base.$player.instructions" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            -- "$player" decode "$clip"
        present "$base.$player.present-count" strace -f -c -o "$R/$base.$player.present-count" \
            -- "$player" "$clip"
        present "$base.$player.present-instructions" valgrind --tool=callgrind \
            --callgrind-out-file=/dev/null -- "$player" "$clip"
    done
done
