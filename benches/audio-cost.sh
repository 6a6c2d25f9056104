#!/bin/sh
# What playing the sound costs: reel with and without its audio stream
# (--no-audio), beside mpv the same way, on one clip (720p H.264 at 25 fps
# with stereo AAC, 10 s), the sound going to a PipeWire null sink started
# here (a private dbus-daemon, pipewire and wireplumber, as
# tests/support/sound_server.rs starts them), the video shown nowhere in real
# time (reel: --output null under --control; mpv: --vo=null), software
# decoding. CPU (user + system) per run from /usr/bin/time, interleaved
# rounds; the cost of sound is the difference with and without.
#
#   benches/audio-cost.sh [RUNS]     release build, RUNS rounds (default 3)
set -eu
project=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
work=$(mktemp -d /tmp/reel-audio-cost.XXXXXX)
chmod 700 "$work"
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
clip=$project/target/bench-media/audio/h264_aac_720p.mp4
mkdir -p "$(dirname "$clip")"
if [ ! -e "$clip" ]; then
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=25" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000" -ac 2 -t 10 \
        -c:v libx264 -preset veryfast -bf 2 -c:a aac -b:a 128k "$clip.tmp.mp4"
    mv "$clip.tmp.mp4" "$clip"
fi
(cd "$project" && cargo build --release --locked --bin reel >&2)
reel=$project/target/release/reel

export XDG_RUNTIME_DIR=$work HOME=$work XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
dbus-daemon --session --address="$DBUS_SESSION_BUS_ADDRESS" --nofork --nopidfile >"$work/dbus.log" 2>&1 &
echo $! >"$work/dbus.pid"
sleep 1
pipewire >"$work/pipewire.log" 2>&1 &
echo $! >"$work/pipewire.pid"
sleep 1
wireplumber >"$work/wireplumber.log" 2>&1 &
echo $! >"$work/wireplumber.pid"
sleep 2
pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=bench-sink media.class=Audio/Sink object.linger=true audio.rate=48000 audio.position=[FL FR] }' >/dev/null
sleep 2

# cpu LABEL COMMAND...: one run, its user + system seconds appended to LABEL.
cpu() {
    label=$1
    shift
    /usr/bin/time -f "%U %S" -o "$work/time" "$@" >/dev/null 2>"$work/$label.log" </dev/null
    awk '{ printf "%.3f\n", $1 + $2 }' "$work/time" >>"$work/$label.cpu"
}
i=0
while [ $i -lt "$runs" ]; do
    cpu reel-sound "$reel" --no-config --output null --control "$work/c.sock" --hwdec no "$clip"
    cpu reel-silent "$reel" --no-config --output null --control "$work/c.sock" --hwdec no --no-audio "$clip"
    cpu mpv-sound mpv --no-config --vo=null --ao=alsa --hwdec=no --msg-level=ao=v "$clip"
    cpu mpv-silent mpv --no-config --vo=null --no-audio --hwdec=no "$clip"
    i=$((i + 1))
done
# The sound really went out: neither player said it played without it.
if grep -l -i -E "without sound|no audio output|could not open audio" "$work"/*-sound.log; then
    echo "a run played without sound: not measured" >&2
    exit 1
fi
median() { sort -n "$work/$1.cpu" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rs=$(median reel-sound) rn=$(median reel-silent) ms=$(median mpv-sound) mn=$(median mpv-silent)
echo "| player | CPU with sound (s) | without (s) | sound's cost (s) |"
echo "|---|---|---|---|"
echo "| reel | $rs | $rn | $(echo "$rs - $rn" | bc) |"
echo "| mpv $(mpv --version | head -1 | cut -d' ' -f2) (--ao=alsa) | $ms | $mn | $(echo "$ms - $mn" | bc) |"
echo "reel's sound costs $(echo "scale=2; ($rs - $rn) / ($ms - $mn)" | bc)x mpv's (median of $runs rounds, 10 s clip)"
