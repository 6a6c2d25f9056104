#!/usr/bin/env python3
"""The table of a guest comparison (benches/guest/compare.sh's results):

    summarise.py RESULTS LONG_FRAMES SHORT_FRAMES

One Markdown table per clip size: reel, GStreamer and their ratio for the
CPU per steady-state frame (the fastest long and short runs' difference
over their difference in frames), start-up CPU, the same two in user-space
instructions (callgrind), max RSS, syscalls per steady-state frame
(strace -c, polls excluded), time to the first decoded picture (the
fastest of the runs, each listed), and into weston the same steady-state
and start-up figures, wake-ups per steady-state frame (voluntary context
switches, the medians' difference), max RSS, wall time, the frames that
reached the screen and the time to the first of them (both read from
weston's protocol log). Medians of the runs, [min-max] where there are
several. Exits 1 when a run failed or a figure is missing.
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
    """(wall s, cpu s, maxrss kB, voluntary context switches) of each run,
    in run order."""
    out = []
    pattern = re.compile(rf"^{re.escape(base)}\.{mode}\.{player}\.(\d+)\.time$")
    runs = sorted(
        (int(m.group(1)), m.group(0)) for m in map(pattern.match, os.listdir(results)) if m
    )
    for _, name in runs:
        check_rc(results, name[: -len(".time")])
        # The last line: wall:user:sys:maxrss_kb:voluntary_switches.
        fields = read(os.path.join(results, name)).split()[-1].split(":")
        if len(fields) != 5:
            raise Missing(f"{name}: not wall:user:sys:maxrss:switches")
        wall, user, system, rss, switches = (float(x) for x in fields)
        out.append((wall, user + system, rss, switches))
    if not out:
        raise Missing(f"no {mode} runs of {player} on {base}")
    return out


def syscalls(results, base, player, kind="count"):
    """Calls in a strace -c summary, polls excluded."""
    check_rc(results, f"{base}.{player}.{kind}")
    calls = 0
    for line in read(os.path.join(results, f"{base}.{player}.{kind}")).splitlines():
        cols = line.split()
        if len(cols) < 5 or not cols[3].isdigit() or cols[-1] in ("total", "syscall"):
            continue
        if cols[-1] not in POLLS:
            calls += int(cols[3])
    if calls == 0:
        raise Missing(f"{base}.{player}.{kind}: no syscalls")
    return calls


# libwayland stamps each line of its protocol log with the wall clock in
# microseconds modulo 2^32, printed as milliseconds: it wraps every 71.6
# minutes.
WAYLAND_LOG_WRAP_MS = 2**32 / 1000
START_MARK = re.compile(r"bench: player starts at (\d+)")
LOG_TIME = re.compile(r"^\[\s*(\d+\.\d+)\]")


def after_start(results, name):
    """Weston's protocol log of a run from the mark the bench wrote when
    the player started (the desktop shell's own surfaces are drawn before
    it), and the wall-clock time of the mark (ns)."""
    log = read(os.path.join(results, f"{name}.weston"))
    mark = START_MARK.search(log)
    if not mark:
        raise Missing(f"{name}.weston: no start mark")
    return log[mark.end():], int(mark.group(1))


def video_surface(results, name):
    """The log from the start (as `after_start`), the player's video
    surface (the one it attached most buffers to: the OSD and the desktop
    shell's surfaces take far fewer) and that surface's attaches."""
    log, start_ns = after_start(results, name)
    per_surface = {}
    for m in re.finditer(r"wl_surface[#@](\d+)\.attach\(wl_buffer[#@]", log):
        per_surface[m.group(1)] = per_surface.get(m.group(1), 0) + 1
    if not per_surface:
        raise Missing(f"{name}.weston: no buffer attached")
    surface = max(per_surface, key=per_surface.get)
    return log, start_ns, surface, per_surface[surface]


def frames_presented(results, name):
    """Buffers the player attached to its video surface after the start,
    from weston's protocol log of the run."""
    return video_surface(results, name)[3]


def first_on_screen_ms(results, name):
    """From the player's start to its first picture on screen, in ms: the
    frame callback the player asked for with the first buffer it attached
    to its video surface is done (weston has repainted with it)."""
    log, start_ns, surface, _ = video_surface(results, name)
    video = re.compile(rf"wl_surface[#@]{surface}\.")
    callback, attached = None, False
    lines = iter(log.splitlines())
    for line in lines:
        if not video.search(line):
            continue
        asked = re.search(r"\.frame\(new id wl_callback[#@](\d+)", line)
        if asked:
            callback = asked.group(1)
        elif ".attach(wl_buffer" in line:
            attached = True
        elif ".commit(" in line:
            if attached:
                break
            callback = None  # asked for an earlier commit
    if not attached or callback is None:
        raise Missing(f"{name}.weston: no frame callback with the first buffer")
    done = re.compile(rf"-> wl_callback[#@]{callback}\.done\(")
    for line in lines:
        stamp = LOG_TIME.match(line)
        if stamp and done.search(line):
            start_ms = (start_ns // 1000 % 2**32) / 1000
            return (float(stamp.group(1)) - start_ms) % WAYLAND_LOG_WRAP_MS
    raise Missing(f"{name}.weston: the first picture's frame callback never done")


def instructions(results, base, player, kind="instructions"):
    """Instructions executed in user space (callgrind's count)."""
    name = f"{base}.{player}.{kind}"
    check_rc(results, name)
    found = re.search(r"Collected\s*:\s*(\d+)", read(os.path.join(results, f"{name}.log")))
    if not found:
        raise Missing(f"{name}.log: no callgrind count")
    return int(found.group(1))


def first_picture_ms(results, base, player):
    """From exec to the first CAPTURE buffer dequeued, in ms: each run's."""
    names = sorted(
        n for n in os.listdir(results)
        if n.startswith(f"{base}.{player}.first.") and n.rsplit(".", 1)[1].isdigit()
    )
    if not names:
        raise Missing(f"no first-picture runs of {player} on {base}")
    return [first_picture_of_run(results, name) for name in names]


def first_picture_of_run(results, name):
    check_rc(results, name)
    start = None
    for line in read(os.path.join(results, name)).splitlines():
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
    raise Missing(f"{name}: no exec or no CAPTURE buffer dequeued")


def spread(values, scale=1.0, digits=1):
    med = statistics.median(values) * scale
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}]"


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def per_frame_and_startup(long_value, short_value, long_frames, short_frames):
    """A cost split into its steady-state part per frame (the long and short
    runs' difference over their difference in frames) and the rest."""
    per_frame = (long_value - short_value) / (long_frames - short_frames)
    return per_frame, short_value - short_frames * per_frame


def presenting(results, long_base, short_base, p, long_frames, short_frames):
    """Player p's figures into weston (its present runs on the long and
    short clip, and their strace -c runs): CPU per steady-state frame and
    start-up (ms), wake-ups per steady-state frame, and per long run the
    max RSS (MB), wall time (s), frames presented and time to the first
    picture on screen (ms); syscalls per steady-state frame."""
    present_long = times(results, long_base, "present", p)
    present_short = times(results, short_base, "present", p)
    per_frame, startup = per_frame_and_startup(
        min(r[1] for r in present_long) * 1000, min(r[1] for r in present_short) * 1000,
        long_frames, short_frames)
    runs = range(1, len(present_long) + 1)
    return {
        "per_frame": per_frame,
        "startup": startup,
        # Wake-ups: the medians' difference (the fewest of a player's runs
        # need not be its fastest). Decoding only, neither player waits
        # once started (about 0 a frame), so only this mode has the row.
        "switches": per_frame_and_startup(
            statistics.median(r[3] for r in present_long), statistics.median(r[3] for r in present_short),
            long_frames, short_frames)[0],
        "rss": [r[2] / 1024 for r in present_long],
        "wall": [r[0] for r in present_long],
        "cpu": [r[1] for r in present_long],
        "shown": [frames_presented(results, f"{long_base}.present.{p}.{i}") for i in runs],
        "on_screen": [first_on_screen_ms(results, f"{long_base}.present.{p}.{i}") for i in runs],
        "calls": (syscalls(results, long_base, p, "present-count")
                  - syscalls(results, short_base, p, "present-count")) / (long_frames - short_frames),
    }


def table(results, size, long_frames, short_frames):
    long_base, short_base = f"h264_{size}.long", f"h264_{size}.short"
    steady = long_frames - short_frames
    per_frame, startup, rss, calls, ttff = {}, {}, {}, {}, {}
    instr_frame, instr_startup = {}, {}
    present_frame, present_startup, present_rss, present_wall, long_cpu = {}, {}, {}, {}, {}
    shown, shown_callgrind, present_calls, on_screen = {}, {}, {}, {}
    present_switches = {}
    present_instr_frame, present_instr_startup = {}, {}
    for p in PLAYERS:
        long_runs = times(results, long_base, "decode", p)
        short_runs = times(results, short_base, "decode", p)
        # Minima: what disturbs a run (the other core's load, page cache,
        # scheduling) only adds time, and a difference of medians of three
        # wandered by more than a frame's cost.
        per_frame[p], startup[p] = per_frame_and_startup(
            min(r[1] for r in long_runs) * 1000, min(r[1] for r in short_runs) * 1000,
            long_frames, short_frames)
        long_cpu[p] = [r[1] for r in long_runs]
        rss[p] = [r[2] / 1024 for r in long_runs]
        calls[p] = (syscalls(results, long_base, p) - syscalls(results, short_base, p)) / steady
        ttff[p] = first_picture_ms(results, long_base, p)
        instr_frame[p], instr_startup[p] = per_frame_and_startup(
            instructions(results, long_base, p), instructions(results, short_base, p),
            long_frames, short_frames)
        fig = presenting(results, long_base, short_base, p, long_frames, short_frames)
        present_frame[p], present_startup[p] = fig["per_frame"], fig["startup"]
        present_switches[p], present_rss[p], present_wall[p] = fig["switches"], fig["rss"], fig["wall"]
        shown[p], on_screen[p], present_calls[p] = fig["shown"], fig["on_screen"], fig["calls"]
        present_instr_frame[p], present_instr_startup[p] = per_frame_and_startup(
            instructions(results, long_base, p, "present-instructions"),
            instructions(results, short_base, p, "present-instructions"),
            long_frames, short_frames)
        shown_callgrind[p] = [frames_presented(results, f"{long_base}.{p}.present-instructions")]

    def one(label, values, digits, scale=1.0):
        """A row of one figure per player."""
        reel, gst = values["reel"] * scale, values["gst"] * scale
        return (label, f"{reel:.{digits}f}", f"{gst:.{digits}f}", ratio(reel, gst))

    def fastest(label, values):
        """A row of each player's fastest run, all runs in brackets: what
        disturbs a run only delays it."""
        cells = [f"{min(v):.0f} [{', '.join(f'{x:.0f}' for x in v)}]" for v in (values["reel"], values["gst"])]
        return (label, *cells, ratio(min(values["reel"]), min(values["gst"])))

    def runs_of(label, values, digits=1):
        """A row of each player's runs: median [min-max]."""
        med = statistics.median
        return (label, spread(values["reel"], digits=digits), spread(values["gst"], digits=digits),
                ratio(med(values["reel"]), med(values["gst"])))

    def costs(mode, cpu_frame, cpu_startup, instructions_frame, instructions_startup):
        """The four rows of a mode's cost: CPU and instructions, per
        steady-state frame and at start-up."""
        return [
            one(f"{mode}: CPU per steady-state frame (ms)", cpu_frame, 2),
            one(f"{mode}: start-up CPU (ms)", cpu_startup, 0),
            one(f"{mode}: user-space instructions per steady-state frame (thousands, callgrind)",
                instructions_frame, 0, 1e-3),
            one(f"{mode}: user-space instructions at start-up (millions, callgrind)",
                instructions_startup, 1, 1e-6),
        ]

    rows = [
        *costs("decode only", per_frame, startup, instr_frame, instr_startup),
        runs_of(f"decode only: CPU, {long_frames} frames (s)", long_cpu, 2),
        runs_of("decode only: max RSS (MB)", rss),
        one("decode only: syscalls per steady-state frame, polls excluded", calls, 1),
        fastest("time to the first decoded picture, under strace, fastest run [all runs] (ms)", ttff),
        runs_of(f"into weston: frames presented of {long_frames}", shown, 0),
        fastest("into weston: time to the first picture on screen, fastest run [all runs] (ms)", on_screen),
        *costs("into weston", present_frame, present_startup, present_instr_frame, present_instr_startup),
        runs_of(f"into weston, under callgrind: frames presented of {long_frames}", shown_callgrind, 0),
        one("into weston: syscalls per steady-state frame, polls excluded", present_calls, 1),
        one("into weston: wake-ups (voluntary context switches) per steady-state frame", present_switches, 2),
        runs_of("into weston: max RSS (MB)", present_rss),
        runs_of(f"into weston: wall time for {long_frames / 25:g} s of media (s)", present_wall),
    ]
    runs = len(long_cpu["reel"])
    lines = [
        f"| H.264 {size} through visl, {runs} run{'s' if runs > 1 else ''} | reel | GStreamer v4l2slh264dec | reel / GStreamer |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def print_tables(results, tool, table_of):
    """Prints table_of(size) for each clip size (WxH) of the runs in
    results, narrowest first; the exit status (1: no runs, a run failed or
    a figure is missing, said on stderr as tool's)."""
    sizes = sorted(
        {m.group(1) for m in (re.match(r"^h264_(\d+x\d+)\.long\.", n) for n in os.listdir(results)) if m},
        key=lambda s: int(s.split("x")[0]),
    )
    if not sizes:
        print(f"{tool}: {results}: no results", file=sys.stderr)
        return 1
    try:
        print("\n\n".join(table_of(size) for size in sizes))
    except Missing as e:
        print(f"{tool}: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    results, long_frames, short_frames = argv[1], int(argv[2]), int(argv[3])
    return print_tables(results, "summarise", lambda size: table(results, size, long_frames, short_frames))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
