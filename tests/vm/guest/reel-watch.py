#!/usr/bin/env python3
"""(in the guest) What a running reel holds, and storms and soaks driven
through its control socket.

    reel-watch.py snapshot PID OUT
    reel-watch.py storm SOCKET SECONDS RATE SEED OUT TARGET...
    reel-watch.py soak SOCKET PID SECONDS OUT
    reel-watch.py summary SAMPLES

- snapshot: one `key=value` line per figure of PID into OUT: rss_kb,
  fds, dmabufs (fds whose fdinfo has `exp_name:`), memfds, video_maps
  (mappings of a /dev/video node: mmapped V4L2 buffers), dmabuf_maps, and
  fd_targets (every fd's link, inode numbers dropped, sorted), dmabuf_sizes.
- storm: SECONDS x RATE `seek` commands over one connection, one every
  1/RATE s: absolute TARGETs (seconds) and relative steps, forward and
  back, drawn with SEED; the last one is the last TARGET. OUT gets one
  line per command: `SECONDS_SINCE_START<TAB>COMMAND<TAB>REPLY`.
- soak: polls `status` every 0.1 s for SECONDS; once per loop over the
  playlist (a second into its first file) appends one tab-separated sample
  to OUT (each count the least of five looks 0.1 s apart): loop, seconds, rss_kb, fds, dmabufs, memfds, video_maps,
  dmabuf_maps, wl_buffers, presented, decode_errors, dmabuf_sizes (COUNTxBYTES
  of each size), wl_buffers_held (those the compositor has not released).
- summary (also on the host): what a soak's samples say after a warm-up
  (the first half of the loops): RSS mean of the first and last quarters of the loops, and each
  count's range in those quarters.
Exit status 1 when reel stops answering.
"""
import os
import random
import re
import socket
import sys
import time


def figures(pid):
    base = f"/proc/{pid}"
    with open(f"{base}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    targets, dmabufs, memfds = [], 0, 0
    dmabuf_sizes = {}
    for fd in os.listdir(f"{base}/fd"):
        try:
            target = os.readlink(f"{base}/fd/{fd}")
            with open(f"{base}/fdinfo/{fd}") as f:
                info = f.read()
        except OSError:
            continue  # closed meanwhile
        if "exp_name:" in info:
            dmabufs += 1
            size = re.search(r"^size:\s*(\d+)", info, re.M)
            size = size.group(1) if size else "?"
            dmabuf_sizes[size] = dmabuf_sizes.get(size, 0) + 1
        if target.startswith("/memfd:"):
            memfds += 1
        targets.append(re.sub(r"\[\d+\]$", "", target))
    video_maps = dmabuf_maps = 0
    with open(f"{base}/maps") as f:
        for line in f:
            if "/dev/video" in line:
                video_maps += 1
            elif "/dmabuf:" in line:
                dmabuf_maps += 1
    return {
        "rss_kb": rss,
        "fds": len(targets),
        "dmabufs": dmabufs,
        "memfds": memfds,
        "video_maps": video_maps,
        "dmabuf_maps": dmabuf_maps,
        "fd_targets": ",".join(sorted(targets)),
        "dmabuf_sizes": ",".join(f"{n}x{size}" for size, n in sorted(dmabuf_sizes.items())),
    }


class Control:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.pending = b""

    def ask(self, command):
        self.sock.sendall(command.encode() + b"\n")
        while b"\n" not in self.pending:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OSError("reel closed the control socket")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode(errors="replace")


def fields(reply):
    return dict(w.split("=", 1) for w in reply.split() if "=" in w)


def snapshot(pid, out):
    with open(out, "w") as f:
        for key, value in figures(pid).items():
            f.write(f"{key}={value}\n")
    return 0


def storm(path, seconds, rate, seed, out, targets):
    rng = random.Random(seed)
    count = int(seconds * rate)
    commands = []
    for _ in range(count - 1):
        if rng.random() < 0.7:
            commands.append(f"seek {rng.choice(targets):.3f}")
        else:
            step = rng.choice([0.1, 0.25, 0.5])
            commands.append(f"seek {rng.choice('+-')}{step}")
    commands.append(f"seek {targets[-1]:.3f}")
    control = Control(path)
    start = time.monotonic()
    with open(out, "w") as f:
        for n, command in enumerate(commands):
            due = start + n / rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            reply = control.ask(command)
            f.write(f"{time.monotonic() - start:.3f}\t{command}\t{reply}\n")
    return 0


def soak(path, pid, seconds, out):
    control = Control(path)
    start = time.monotonic()
    sampled = False
    loop = 0
    with open(out, "w") as f:
        while time.monotonic() - start < seconds:
            status = fields(control.ask("status"))
            first_file = status.get("index", "").startswith("1/")
            # A second into the first file: its decoder is set up and the
            # previous file's is going or gone. Paused there, each loop is
            # sampled in the same state (playing in real time, a sample
            # could fall into the next file change). A decoder thread that
            # is still winding down holds its buffers for a moment: each
            # figure is the least of five looks 0.1 s apart, where a leak
            # stays.
            steady = first_file and float(status.get("position", 0)) >= 1.0
            if steady and not sampled:
                sampled = True
                loop += 1
                control.ask("pause")
                looks = []
                for _ in range(5):
                    time.sleep(0.1)
                    looks.append(figures(pid))
                control.ask("resume")
                s = {k: min(l[k] for l in looks) for k in ("rss_kb", "fds", "dmabufs", "memfds", "video_maps", "dmabuf_maps")}
                # Which buffers: bytes per dmabuf tell the files apart.
                sizes = min(looks, key=lambda l: l["dmabufs"])["dmabuf_sizes"]
                f.write(
                    f"{loop}\t{time.monotonic() - start:.1f}\t{s['rss_kb']}\t{s['fds']}\t"
                    f"{s['dmabufs']}\t{s['memfds']}\t{s['video_maps']}\t{s['dmabuf_maps']}\t"
                    f"{status.get('wl_buffers')}\t{status.get('presented')}\t"
                    f"{status.get('decode_errors')}\t{sizes}\t{status.get('wl_buffers_held')}\n"
                )
                f.flush()
            if not first_file:
                sampled = False
            time.sleep(0.1)
    return 0


def summary(path):
    columns = ["rss_kb", "fds", "dmabufs", "memfds", "video_maps", "dmabuf_maps", "wl_buffers"]
    with open(path) as f:
        rows = [l.split("\t") for l in f if l.strip()]
    steady = rows[len(rows) // 2:]
    if len(steady) < 4:
        print(f"{len(rows)} loops: too few for quarters")
        return 1
    quarter = (len(steady) + 3) // 4
    first, last = steady[:quarter], steady[-quarter:]
    print(f"loops {len(rows)} over {rows[-1][1]} s, frames presented {rows[-1][9]}, "
          f"decode errors {rows[-1][10].strip()}")
    for i, name in enumerate(columns, start=2):
        a = [float(r[i]) for r in first]
        b = [float(r[i]) for r in last]
        if name == "rss_kb":
            change = (sum(b) / len(b)) / (sum(a) / len(a)) - 1
            print(f"rss_kb: first quarter mean {sum(a) / len(a):.0f}, last quarter mean "
                  f"{sum(b) / len(b):.0f} ({change * 100:+.2f} %)")
        else:
            print(f"{name}: first quarter {min(a):.0f}..{max(a):.0f}, last quarter {min(b):.0f}..{max(b):.0f}")
    return 0


def main():
    args = sys.argv[1:]
    try:
        if args[:1] == ["snapshot"] and len(args) == 3:
            return snapshot(args[1], args[2])
        if args[:1] == ["storm"] and len(args) >= 7:
            return storm(
                args[1], float(args[2]), float(args[3]), int(args[4]), args[5],
                [float(t) for t in args[6:]],
            )
        if args[:1] == ["summary"] and len(args) == 2:
            return summary(args[1])
        if args[:1] == ["soak"] and len(args) == 5:
            return soak(args[1], args[2], float(args[3]), args[4])
    except OSError as e:
        print(f"reel-watch: {e}", file=sys.stderr)
        return 1
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
