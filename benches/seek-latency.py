#!/usr/bin/env python3
"""Exact-seek latency over mpv's JSON IPC: reel against mpv 0.35.

Both players run paused side by side in one weston 14 headless (desktop
shell), software decoding, on long-GOP 720p clips (10 s, one keyframe every
250 frames, made here when missing: H.264 with B-frames, HEVC, VP9). For
each of N random targets (the same for both, seeded), `seek T absolute
exact` is sent to one player, then to the other (who goes first alternates),
and the time from sending it to the `playback-restart` event is taken: the
target frame decoded and put on screen. Printed per clip: each player's
median and p90 in milliseconds, and reel / mpv.

    benches/seek-latency.py [SEEKS]    release build, SEEKS seeks per clip (default 25)
"""
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEDIA = os.path.join(PROJECT, "target", "seek-media")
SOURCE = "testsrc2=size=1280x720:rate=25:duration=10"
CLIPS = [
    ("h264_gop250.mp4", ["-c:v", "libx264", "-preset", "veryfast", "-g", "250", "-bf", "3"]),
    ("hevc_gop250.mp4", ["-c:v", "libx265", "-preset", "ultrafast",
                         "-x265-params", "keyint=250:min-keyint=250:log-level=error"]),
    ("vp9_gop250.webm", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8",
                         "-g", "250", "-b:v", "2M"]),
]


def clips():
    os.makedirs(MEDIA, exist_ok=True)
    paths = []
    for name, codec in CLIPS:
        path = os.path.join(MEDIA, name)
        if not os.path.exists(path):
            partial = os.path.join(MEDIA, "partial-" + name)
            subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", SOURCE,
                            *codec, "-pix_fmt", "yuv420p", partial], check=True)
            os.rename(partial, path)
        paths.append(path)
    return paths


class Client:
    """One player's IPC socket: requests, and the events in between."""

    def __init__(self, path, process):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.05)
        self.file = self.sock.makefile("rw")
        self.request_id = 0

    def send(self, *command):
        self.request_id += 1
        self.file.write(json.dumps({"command": list(command), "request_id": self.request_id}) + "\n")
        self.file.flush()
        return self.request_id

    def until(self, wanted, timeout=30):
        """Reads lines until `wanted(message)`; that message."""
        self.sock.settimeout(timeout)
        while True:
            message = json.loads(self.file.readline())
            if wanted(message):
                return message

    def request(self, *command):
        sent = self.send(*command)
        return self.until(lambda m: m.get("request_id") == sent)

    def seek(self, target):
        """Milliseconds from sending the seek to its playback-restart."""
        start = time.monotonic()
        sent = self.send("seek", target, "absolute", "exact")
        replied = False
        while True:
            message = self.until(lambda m: m.get("request_id") == sent
                                 or m.get("event") == "playback-restart")
            if message.get("request_id") == sent:
                if message.get("error") != "success":
                    raise RuntimeError(f"seek {target}: {message}")
                replied = True
            elif replied:
                return (time.monotonic() - start) * 1e3


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    seeks = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "reel"], cwd=PROJECT,
                   check=True, stdout=sys.stderr)
    reel = os.path.join(PROJECT, "target", "release", "reel")
    work = tempfile.mkdtemp(prefix="reel-seek.")
    os.chmod(work, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=work, HOME=work)
    env.pop("WAYLAND_DISPLAY", None)
    weston = subprocess.Popen(["weston", "--backend=headless", "--shell=desktop", "--idle-time=0",
                               "--width=1920", "--height=1080", "--socket=bench"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("clip                 player   median ms   p90 ms   (reel / mpv: median, p90)")
    try:
        while not os.path.exists(os.path.join(work, "bench")):
            time.sleep(0.05)
        player_env = dict(env, WAYLAND_DISPLAY="bench")
        for clip in clips():
            commands = {
                "reel": [reel, "--no-config", "--hwdec=no", "--no-audio", "--pause",
                         f"--input-ipc-server={work}/reel.sock", clip],
                "mpv": ["mpv", "--no-config", "--vo=wlshm", "--hwdec=no", "--no-audio", "--pause",
                        "--really-quiet", f"--input-ipc-server={work}/mpv.sock", clip],
            }
            processes, clients = {}, {}
            for name, command in commands.items():
                processes[name] = subprocess.Popen(command, env=player_env,
                                                   stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.DEVNULL)
                clients[name] = Client(f"{work}/{name}.sock", processes[name])
            for client in clients.values():
                # Loaded and showing its first frame before the first seek.
                while client.request("get_property", "time-pos").get("error") != "success":
                    time.sleep(0.05)
            rng = random.Random(1)
            times = {name: [] for name in commands}
            for i in range(seeks):
                target = round(rng.uniform(0.5, 9.5), 3)
                order = list(commands) if i % 2 == 0 else list(reversed(commands))
                for name in order:
                    times[name].append(clients[name].seek(target))
                    time.sleep(0.1)
            for name, process in processes.items():
                clients[name].send("quit")
                process.wait(timeout=20)
            medians = {n: statistics.median(t) for n, t in times.items()}
            p90s = {n: percentile(t, 90) for n, t in times.items()}
            for name in commands:
                ratio = ""
                if name == "reel":
                    ratio = (f"   {medians['reel'] / medians['mpv']:.2f}, "
                             f"{p90s['reel'] / p90s['mpv']:.2f}")
                print(f"{os.path.basename(clip):20} {name:6} {medians[name]:10.0f} "
                      f"{p90s[name]:8.0f}{ratio}")
    finally:
        weston.terminate()
        weston.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
