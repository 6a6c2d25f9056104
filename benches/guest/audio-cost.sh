#!/bin/sh
# (in the test guest) What playing the sound costs on the V4L2 path
# (benches/guest-audio-cost.sh starts it, with QEMU's AC97 card):
#
#   audio-cost.sh REEL RUNS CLIP
#
# CLIP: H.264 with an AAC track. The picture is decoded by visl and shown
# nowhere, in real time; the sound goes to the card (plughw:0,0: ALSA's
# own conversion, no sound server in the guest). For RUNS rounds, in turn:
# - reel-sound: `reel --hwdec v4l2 --output null --control SOCK
#   --audio-device plughw:0,0` (under --control, null output plays in
#   real time); reel-silent: the same with --no-audio;
# - gst-sound: `gst-launch-1.0 filesrc ! qtdemux ! (h264parse !
#   v4l2slh264dec ! fakevideosink sync=true) (aacparse ! avdec_aac !
#   audioconvert ! audioresample ! alsasink)`; gst-silent: the video branch
#   alone.
# In $REEL_RESULTS: LABEL.RUN.time ("wall user sys"), .log, .rc.
set -eu
R=$REEL_RESULTS
reel=$1
runs=$2
clip=$3
XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
device=plughw:0,0
if [ ! -e /dev/snd/pcmC0D0p ]; then
    echo "no sound card in the guest" >&2
    cat /proc/asound/cards >&2 || true
    exit 3
fi
cat /proc/asound/cards >"$R/cards.txt"

# command LABEL: the command line, one word per line.
command() {
    case $1 in
    reel-sound | reel-silent)
        printf '%s\n' "$reel" --no-config --hwdec v4l2 --output null \
            --control "$XDG_RUNTIME_DIR/control.sock" --audio-device "$device" -v
        [ "$1" = reel-silent ] && echo --no-audio
        echo "$clip"
        ;;
    gst-sound)
        printf '%s\n' gst-launch-1.0 -q filesrc "location=$clip" ! qtdemux name=d \
            d.video_0 ! queue ! h264parse ! v4l2slh264dec ! fakevideosink sync=true \
            d.audio_0 ! queue ! aacparse ! avdec_aac ! audioconvert ! audioresample \
            ! alsasink "device=$device"
        ;;
    gst-silent)
        printf '%s\n' gst-launch-1.0 -q filesrc "location=$clip" ! qtdemux ! h264parse \
            ! v4l2slh264dec ! fakevideosink sync=true
        ;;
    esac
}

# run NAME LABEL: one timed run.
run() {
    rc=0
    # shellcheck disable=SC2046
    /usr/bin/time -f "%e %U %S" -o "$R/$1.time" $(command "$2") >/dev/null 2>"$R/$1.log" </dev/null || rc=$?
    echo "$rc" >"$R/$1.rc"
}

# Warm-up, untimed: GStreamer's plugin registry, the libraries in the page
# cache (read over 9p).
for label in reel-sound gst-sound; do
    run "warm-up.$label" "$label"
done
i=1
while [ $i -le "$runs" ]; do
    if [ $((i % 2)) -eq 1 ]; then
        order="reel-sound reel-silent gst-sound gst-silent"
    else
        order="gst-silent gst-sound reel-silent reel-sound"
    fi
    for label in $order; do
        run "$label.$i" "$label"
    done
    i=$((i + 1))
done
