#!/usr/bin/env python3
"""The table of a guest comparison (benches/guest/compare.sh's results):

    summarise.py RESULTS LONG_FRAMES SHORT_FRAMES

One Markdown table per clip size: reel, GStreamer and their ratio for the
CPU per steady-state frame (the fastest long and short runs' difference
over their difference in frames), start-up CPU, the same two in user-space
instructions (callgrind), max RSS, syscalls per steady-state
frame (strace -c, polls excluded), time to the first decoded picture, and
into weston (short clips) the client's CPU per frame, max RSS and wall
time. Medians of
the runs, [min-max] where there are several. Exits 1 when a run failed or
a figure is missing.
"""
import os
import re
import statistics
import sys

PLAYERS = ("reel", "gst")
POLLS = {"poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_pwait2", "select", "pselect6"}


class Missing(Exception):
    pass


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise Missing(f"{path}: {e}")


def check_rc(results, name):
    rc = read(os.path.join(results, f"{name}.rc")).strip()
    if rc != "0":
        log = read(os.path.join(results, f"{name}.log"))[-2000:]
        raise Missing(f"{name}: exit status {rc}\n{log}")


def times(results, base, mode, player):
    """(wall s, cpu s, maxrss kB) of each run, in run order."""
    out = []
    pattern = re.compile(rf"^{re.escape(base)}\.{mode}\.{player}\.(\d+)\.time$")
    runs = sorted(
        (int(m.group(1)), m.group(0)) for m in map(pattern.match, os.listdir(results)) if m
    )
    for _, name in runs:
        check_rc(results, name[: -len(".time")])
        # The last line: wall:user:sys:maxrss_kb.
        fields = read(os.path.join(results, name)).split()[-1].split(":")
        wall, user, system, rss = (float(x) for x in fields)
        out.append((wall, user + system, rss))
    if not out:
        raise Missing(f"no {mode} runs of {player} on {base}")
    return out


def syscalls(results, base, player):
    """Calls in a strace -c summary, polls excluded."""
    check_rc(results, f"{base}.{player}.count")
    calls = 0
    for line in read(os.path.join(results, f"{base}.{player}.count")).splitlines():
        cols = line.split()
        if len(cols) < 5 or not cols[3].isdigit() or cols[-1] in ("total", "syscall"):
            continue
        if cols[-1] not in POLLS:
            calls += int(cols[3])
    if calls == 0:
        raise Missing(f"{base}.{player}.count: no syscalls")
    return calls


def instructions(results, base, player):
    """Instructions executed in user space (callgrind's count)."""
    name = f"{base}.{player}.instructions"
    check_rc(results, name)
    found = re.search(r"Collected\s*:\s*(\d+)", read(os.path.join(results, f"{name}.log")))
    if not found:
        raise Missing(f"{name}.log: no callgrind count")
    return int(found.group(1))


def first_picture_ms(results, base, player):
    """From exec to the first CAPTURE buffer dequeued, in ms."""
    check_rc(results, f"{base}.{player}.first")
    start = None
    for line in read(os.path.join(results, f"{base}.{player}.first")).splitlines():
        cols = line.split(None, 2)
        if len(cols) < 3:
            continue
        try:
            t = float(cols[1])
        except ValueError:
            continue
        if start is None and cols[2].startswith("execve("):
            start = t
        # A dequeue is split over two lines when another thread's call
        # comes between its start and its end: the end has the result.
        dequeue = "VIDIOC_DQBUF" in cols[2] or "resumed>" in cols[2]
        if start is not None and dequeue and "CAPTURE" in cols[2] and cols[2].rstrip().endswith("= 0"):
            return (t - start) * 1000
    raise Missing(f"{base}.{player}.first: no exec or no CAPTURE buffer dequeued")


def spread(values, scale=1.0, digits=1):
    med = statistics.median(values) * scale
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}]"


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def table(results, size, long_frames, short_frames):
    long_base, short_base = f"h264_{size}.long", f"h264_{size}.short"
    steady = long_frames - short_frames
    rows = []
    per_frame, startup, rss, calls, ttff = {}, {}, {}, {}, {}
    instr_frame, instr_startup = {}, {}
    present_cpu, present_rss, present_wall, long_cpu = {}, {}, {}, {}
    for p in PLAYERS:
        long_runs = times(results, long_base, "decode", p)
        short_runs = times(results, short_base, "decode", p)
        # Minima: what disturbs a run (the other core's load, page cache,
        # scheduling) only adds time, and a difference of medians of three
        # wandered by more than a frame's cost.
        cpu_long = min(r[1] for r in long_runs)
        cpu_short = min(r[1] for r in short_runs)
        per_frame[p] = (cpu_long - cpu_short) / steady * 1000
        startup[p] = (cpu_short - short_frames * per_frame[p] / 1000) * 1000
        long_cpu[p] = [r[1] for r in long_runs]
        rss[p] = [r[2] / 1024 for r in long_runs]
        calls[p] = (syscalls(results, long_base, p) - syscalls(results, short_base, p)) / steady
        ttff[p] = first_picture_ms(results, long_base, p)
        instr_long = instructions(results, long_base, p)
        instr_short = instructions(results, short_base, p)
        instr_frame[p] = (instr_long - instr_short) / steady
        instr_startup[p] = instr_short - short_frames * instr_frame[p]
        present = times(results, short_base, "present", p)
        present_cpu[p] = [r[1] / short_frames * 1000 for r in present]
        present_rss[p] = [r[2] / 1024 for r in present]
        present_wall[p] = [r[0] for r in present]
    med = statistics.median
    rows.append(("decode only: CPU per steady-state frame (ms)",
                 f"{per_frame['reel']:.2f}", f"{per_frame['gst']:.2f}",
                 ratio(per_frame["reel"], per_frame["gst"])))
    rows.append(("decode only: start-up CPU (ms)",
                 f"{startup['reel']:.0f}", f"{startup['gst']:.0f}",
                 ratio(startup["reel"], startup["gst"])))
    rows.append(("decode only: user-space instructions per steady-state frame (thousands, callgrind)",
                 f"{instr_frame['reel'] / 1e3:.0f}", f"{instr_frame['gst'] / 1e3:.0f}",
                 ratio(instr_frame["reel"], instr_frame["gst"])))
    rows.append(("decode only: user-space instructions at start-up (millions, callgrind)",
                 f"{instr_startup['reel'] / 1e6:.1f}", f"{instr_startup['gst'] / 1e6:.1f}",
                 ratio(instr_startup["reel"], instr_startup["gst"])))
    rows.append((f"decode only: CPU, {long_frames} frames (s)",
                 spread(long_cpu["reel"], digits=2), spread(long_cpu["gst"], digits=2),
                 ratio(med(long_cpu["reel"]), med(long_cpu["gst"]))))
    rows.append(("decode only: max RSS (MB)",
                 spread(rss["reel"]), spread(rss["gst"]), ratio(med(rss["reel"]), med(rss["gst"]))))
    rows.append(("decode only: syscalls per steady-state frame, polls excluded",
                 f"{calls['reel']:.1f}", f"{calls['gst']:.1f}", ratio(calls["reel"], calls["gst"])))
    rows.append(("time to the first decoded picture, under strace (ms)",
                 f"{ttff['reel']:.0f}", f"{ttff['gst']:.0f}", ratio(ttff["reel"], ttff["gst"])))
    rows.append(("into weston: client CPU per frame, start-up included (ms)",
                 spread(present_cpu["reel"], digits=2), spread(present_cpu["gst"], digits=2),
                 ratio(med(present_cpu["reel"]), med(present_cpu["gst"]))))
    rows.append(("into weston: max RSS (MB)",
                 spread(present_rss["reel"]), spread(present_rss["gst"]),
                 ratio(med(present_rss["reel"]), med(present_rss["gst"]))))
    rows.append((f"into weston: wall time for {short_frames / 25:g} s of media (s)",
                 spread(present_wall["reel"]), spread(present_wall["gst"]),
                 ratio(med(present_wall["reel"]), med(present_wall["gst"]))))
    runs = len(long_cpu["reel"])
    lines = [
        f"| H.264 {size} through visl, {runs} run{'s' if runs > 1 else ''} | reel | GStreamer v4l2slh264dec | reel / GStreamer |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    results, long_frames, short_frames = argv[1], int(argv[2]), int(argv[3])
    sizes = sorted(
        {m.group(1) for m in (re.match(r"^h264_(\d+x\d+)\.long\.", n) for n in os.listdir(results)) if m},
        key=lambda s: int(s.split("x")[0]),
    )
    if not sizes:
        print(f"{results}: no results", file=sys.stderr)
        return 1
    try:
        print("\n\n".join(table(results, s, long_frames, short_frames) for s in sizes))
    except Missing as e:
        print(f"summarise: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
