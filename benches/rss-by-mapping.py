#!/usr/bin/env python3
"""Where a player's resident memory goes: runs COMMAND, reads its
/proc/PID/smaps every 50 ms, and at the sample of highest RSS prints the
resident and private-dirty kilobytes by mapping: each shared library (its
code and its relocated data apart), the heap, anonymous memory (thread
stacks, allocators' arenas, buffers), dmabuf and other device mappings.

    benches/rss-by-mapping.py [--top N] -- COMMAND [ARGS...]

Private-dirty pages are what the process itself costs; clean file pages
(library code) are shared with every other process using the library and
can be dropped and read again. The sum is RSS as `ps` and `time -v` show it.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import time

HEADER = re.compile(r"^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$")


def read_smaps(pid):
    """[(name, perms, rss_kb, private_dirty_kb)] of every mapping."""
    mappings = []
    name = perms = None
    rss = dirty = 0
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                header = HEADER.match(line)
                if header:
                    if name is not None:
                        mappings.append((name, perms, rss, dirty))
                    perms, name = header.group(1), header.group(2).strip()
                    rss = dirty = 0
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Private_Dirty:"):
                    dirty = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    if name is not None:
        mappings.append((name, perms, rss, dirty))
    return mappings


def group(name, perms, dirty):
    """The row a mapping is counted under."""
    if not name:
        return "anonymous (stacks, arenas, buffers)"
    if name.startswith("/dmabuf") or name.startswith("/dev/"):
        return "device and dmabuf mappings"
    if name.startswith("["):
        return name
    base = os.path.basename(name)
    if ".so" in base:
        if "x" in perms:
            part = "code"
        elif "w" in perms or dirty:
            # Writable data, and RELRO: written by the dynamic linker's
            # relocations, then made read-only.
            part = "relocated data"
        else:
            part = "read-only"
        return f"{base} ({part})"
    return base


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    process = subprocess.Popen(command)
    best, best_rss = None, -1
    while process.poll() is None:
        mappings = read_smaps(process.pid)
        if mappings:
            rss = sum(m[2] for m in mappings)
            if rss > best_rss:
                best, best_rss = mappings, rss
        time.sleep(0.05)
    if best is None:
        print("rss-by-mapping: no sample", file=sys.stderr)
        return 1
    rows = collections.defaultdict(lambda: [0, 0])
    libraries = set()
    for name, perms, rss, dirty in best:
        row = rows[group(name, perms, dirty)]
        row[0] += rss
        row[1] += dirty
        if ".so" in os.path.basename(name):
            libraries.add(name)
    total_dirty = sum(r[1] for r in rows.values())
    print(f"max RSS {best_rss} kB, private dirty {total_dirty} kB, "
          f"{len(libraries)} shared libraries mapped; exit {process.returncode}")
    print("| mapping | RSS kB | private dirty kB |")
    print("|---|---|---|")
    ordered = sorted(rows.items(), key=lambda kv: -kv[1][0])
    for name, (rss, dirty) in ordered[: args.top]:
        print(f"| {name} | {rss} | {dirty} |")
    rest = ordered[args.top:]
    if rest:
        print(f"| {len(rest)} more | {sum(r[1][0] for r in rest)} | "
              f"{sum(r[1][1] for r in rest)} |")
    libs_rss = sum(r[0] for n, r in rows.items() if ".so" in n)
    libs_dirty = sum(r[1] for n, r in rows.items() if ".so" in n)
    print(f"| all shared libraries | {libs_rss} | {libs_dirty} |")
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
