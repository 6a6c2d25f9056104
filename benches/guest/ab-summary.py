#!/usr/bin/env python3
"""The table of a guest A/B (benches/guest/ab.sh's results):

    ab-summary.py RESULTS LONG_FRAMES SHORT_FRAMES PLAYER...

One Markdown table per clip size into weston, a column per player (as
ab.sh names them: a reel binary's file name, or gst) and each player's
ratio to the first: CPU per steady-state frame and start-up CPU (fastest
runs, as benches/guest/summarise.py computes them), CPU of each long run,
wake-ups and syscalls per steady-state frame, frames presented, the time
to the first picture on screen. Exits 1 when a run failed or a figure is
missing.
"""
import statistics
import sys

from summarise import presenting, print_tables, ratio, spread


def table(results, size, long_frames, short_frames, players):
    long_base, short_base = f"h264_{size}.long", f"h264_{size}.short"
    figs = {p: presenting(results, long_base, short_base, p, long_frames, short_frames) for p in players}
    first = players[0]

    def row(label, value, text):
        cells = [text(figs[p]) for p in players]
        ratios = [ratio(value(figs[p]), value(figs[first])) for p in players[1:]]
        return f"| {label} | " + " | ".join(cells + ratios) + " |"

    runs = len(figs[first]["cpu"])
    head = [f"{p}" for p in players] + [f"{p} / {first}" for p in players[1:]]
    lines = [
        f"| H.264 {size} into weston, {runs} run{'s' if runs > 1 else ''} | " + " | ".join(head) + " |",
        "|---|" + "---|" * len(head),
        row("CPU per steady-state frame (ms)", lambda f: f["per_frame"], lambda f: f"{f['per_frame']:.2f}"),
        row("start-up CPU (ms)", lambda f: f["startup"], lambda f: f"{f['startup']:.0f}"),
        row(f"CPU, {long_frames} frames (s)", lambda f: statistics.median(f["cpu"]),
            lambda f: spread(f["cpu"], digits=2)),
        row("wake-ups (voluntary context switches) per steady-state frame", lambda f: f["switches"],
            lambda f: f"{f['switches']:.2f}"),
        row("syscalls per steady-state frame, polls excluded (strace)", lambda f: f["calls"],
            lambda f: f"{f['calls']:.1f}"),
        row(f"frames presented of {long_frames}", lambda f: statistics.median(f["shown"]),
            lambda f: spread(f["shown"], digits=0)),
        row("time to the first picture on screen, fastest run (ms)", lambda f: min(f["on_screen"]),
            lambda f: f"{min(f['on_screen']):.0f}"),
    ]
    return "\n".join(lines)


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    results, long_frames, short_frames, players = argv[1], int(argv[2]), int(argv[3]), argv[4:]
    return print_tables(
        results, "ab-summary", lambda size: table(results, size, long_frames, short_frames, players))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
