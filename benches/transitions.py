#!/usr/bin/env python3
"""Playlist transitions: how long the picture stands still at a file change.

A playlist of six 0.6 s files mixing codecs, sizes, frame rates (25, 29.97,
50) and containers (the clips of tests/timing/playlist_gapless.rs, made here
when missing), four times over (23 transitions), played fullscreen in weston
14 headless (kiosk shell, 120 Hz) by reel (gapless, the default), reel
--gapless=no and mpv 0.35 (--prefetch-playlist=yes, --vo=wlshm), software
decoding. Each player's video surface commits are read from weston's protocol
log (millisecond stamps, the same for every player); the 23 longest intervals
between two commits are the transitions (no player stalls elsewhere on these
clips). Printed: their median and largest, and the median interval of all.

    benches/transitions.py [ROUNDS]    release build, ROUNDS rounds (default 3)
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEDIA = os.path.join(PROJECT, "target", "gapless-media")
CLIPS = [
    ("h264_bframes_25.mp4", "640x360", "25", ["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2"]),
    ("h264_30000_1001.mkv", "480x270", "30000/1001", ["-c:v", "libx264", "-preset", "ultrafast", "-bf", "0"]),
    ("hevc_50.mp4", "320x240", "50",
     ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error"]),
    ("vp9_25.webm", "352x288", "25", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"]),
    ("mpeg2_25.ts", "640x360", "25", ["-c:v", "mpeg2video", "-q:v", "4"]),
    ("vp8_30000_1001.ivf", "400x224", "30000/1001",
     ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"]),
]
REPEAT = 4
COMMIT = re.compile(r"^\[\S+ (\d+):(\d+):([\d.]+)\]\[proto\] client \S+ \(PID (\d+)\) rq wl_surface@(\d+)\.commit\(\)")


def clips():
    os.makedirs(MEDIA, exist_ok=True)
    paths = []
    for name, size, rate, codec in CLIPS:
        path = os.path.join(MEDIA, name)
        if not os.path.exists(path):
            partial = os.path.join(MEDIA, "partial-" + name)
            subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                            f"testsrc2=size={size}:rate={rate}:duration=0.6", *codec,
                            "-pix_fmt", "yuv420p", partial], check=True)
            os.rename(partial, path)
        paths.append(path)
    return paths


def commits(log, pid):
    """Commit times (s) of the surface `pid` committed most."""
    by_surface = {}
    for line in log.splitlines():
        m = COMMIT.match(line)
        if m and int(m.group(4)) == pid:
            t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
            by_surface.setdefault(m.group(5), []).append(t)
    return max(by_surface.values(), key=len, default=[])


def play(command, files):
    work = tempfile.mkdtemp(prefix="reel-transitions.")
    os.chmod(work, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=work, HOME=work)
    env.pop("WAYLAND_DISPLAY", None)
    with open(os.path.join(work, "weston.log"), "w") as log:
        weston = subprocess.Popen(
            ["weston", "--backend=headless", "--debug", "--logger-scopes=proto", "--shell=kiosk",
             "--idle-time=0", "--refresh-rate=120000", "--width=1280", "--height=720",
             "--socket=bench"], env=env, stdout=log, stderr=log)
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(work, "bench")):
                break
            time.sleep(0.05)
        player = subprocess.Popen(command + files, env=dict(env, WAYLAND_DISPLAY="bench"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        player.wait(timeout=120)
        time.sleep(0.2)
        with open(os.path.join(work, "weston.log")) as f:
            return commits(f.read(), player.pid)
    finally:
        weston.terminate()
        weston.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "reel"], cwd=PROJECT,
                   check=True, stdout=sys.stderr)
    reel = os.path.join(PROJECT, "target", "release", "reel")
    files = clips() * REPEAT
    transitions = len(files) - 1
    players = {
        "reel": [reel, "--no-config", "--fullscreen", "--no-audio"],
        "reel --gapless=no": [reel, "--no-config", "--fullscreen", "--no-audio", "--gapless=no"],
        "mpv --prefetch-playlist": ["mpv", "--no-config", "--vo=wlshm", "--hwdec=no", "--fs",
                                    "--really-quiet", "--prefetch-playlist=yes",
                                    "--gapless-audio=yes"],
    }
    results = {name: [] for name in players}
    for _ in range(rounds):
        for name, command in players.items():
            times = play(command, files)
            intervals = [b - a for a, b in zip(times, times[1:])]
            longest = sorted(intervals)[-transitions:]
            results[name].append((statistics.median(longest), max(longest),
                                  statistics.median(intervals), len(times)))
    print(f"{transitions} transitions, {rounds} rounds; milliseconds (medians over rounds)")
    print(f"{'player':26} {'transition median':>18} {'transition max':>15} {'frame median':>13} {'commits':>8}")
    for name, rows in results.items():
        med = statistics.median(r[0] for r in rows) * 1e3
        worst = statistics.median(r[1] for r in rows) * 1e3
        frame = statistics.median(r[2] for r in rows) * 1e3
        count = statistics.median(r[3] for r in rows)
        print(f"{name:26} {med:18.1f} {worst:15.1f} {frame:13.1f} {count:8.0f}")


if __name__ == "__main__":
    main()
