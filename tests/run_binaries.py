#!/usr/bin/env python3
"""Runs the test binaries cargo built, LANES at a time (default 2), longest
first, and sums their results.

`cargo test` runs its binaries one after another. Most of the suite's time
is QEMU guests under TCG, each mostly one busy vCPU (one reel run at a
time), so two binaries at once use the two cores that one leaves half idle.
Each binary keeps its own test threads and its own guest boot(s);
tests/vm/run.sh bounds the guests running at once (REEL_VM_SLOTS).

    tests/run_binaries.py [--lanes N] -- CARGO_TEST_ARGS...

builds with `cargo test --no-run CARGO_TEST_ARGS --message-format=json`,
then runs every test executable from the project directory. Each binary's
output is printed whole when it ends (so that two never interleave), with
its wall time; at the end, a table of the binaries by time and the totals.
Exit status: 0 when every binary passed, 1 otherwise.

The order comes from tests/suite-times.tsv (binary, seconds: the last full
run's figures; unknown binaries count as 60 s) and target/suite-times.tsv,
which each run rewrites with what it measured. A binary marked `alone` in
tests/suite-times.tsv' third column runs after the others, by itself: its
tests measure timing (picture against sound, recordings of real-time
playback) that a guest on the other core would disturb.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
COMMITTED_TIMES = PROJECT / "tests" / "suite-times.tsv"
UNKNOWN_SECONDS = 60.0
RESULT = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out"
)


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR", PROJECT / "target"))


def read_times(path):
    """{binary: seconds} and the set of binaries to run alone."""
    times, alone = {}, set()
    try:
        for line in path.read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split("\t")
            times[fields[0]] = float(fields[1])
            if fields[2:3] == ["alone"]:
                alone.add(fields[0])
    except (OSError, ValueError, IndexError):
        pass
    return times, alone


def build(cargo_args):
    """The test executables of `cargo test --no-run`: (name, path)."""
    command = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics"]
    command += cargo_args
    proc = subprocess.run(command, cwd=PROJECT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"run_binaries: {' '.join(command)} failed ({proc.returncode})")
    binaries = []
    for line in proc.stdout.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact":
            continue
        if not message.get("profile", {}).get("test") or not message.get("executable"):
            continue
        target = message["target"]
        kind = target["kind"][0]
        # The library's and the binary's unit tests are named by their kind.
        name = target["name"] if kind == "test" else f"{target['name']} ({kind})"
        binaries.append((name, message["executable"]))
    return binaries


def run_one(name, executable, print_lock):
    start = time.monotonic()
    proc = subprocess.run(
        [executable],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    seconds = time.monotonic() - start
    counts = [0, 0, 0]
    seen_result = False
    for line in proc.stdout.splitlines():
        m = RESULT.match(line)
        if m:
            seen_result = True
            counts[0] += int(m.group(1))
            counts[1] += int(m.group(2))
            counts[2] += int(m.group(3))
    ok = proc.returncode == 0
    if not ok and counts[1] == 0:
        # A crash or a harness error: no test counted it.
        counts[1] = 1
    with print_lock:
        status = "ok" if ok else f"FAILED (exit {proc.returncode})"
        print(f"     Running {name} ({seconds:.0f} s, {status})", flush=True)
        print(proc.stdout, flush=True)
        if not seen_result:
            print(f"run_binaries: {name}: no test result line", flush=True)
    return name, seconds, ok, counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=int(os.environ.get("REEL_TEST_LANES", "2")))
    parser.add_argument("cargo_args", nargs="*")
    args = parser.parse_args()

    binaries = build(args.cargo_args)
    times, alone = read_times(COMMITTED_TIMES)
    times.update(read_times(target_dir() / "suite-times.tsv")[0])
    binaries.sort(key=lambda b: -times.get(b[0], UNKNOWN_SECONDS))
    shared = [b for b in binaries if b[0] not in alone]
    by_itself = [b for b in binaries if b[0] in alone]
    print(
        f"run_binaries: {len(binaries)} test binaries, {args.lanes} at a time"
        f" ({len(by_itself)} alone at the end)",
        flush=True,
    )

    print_lock = threading.Lock()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.lanes)) as pool:
        results = list(pool.map(lambda b: run_one(b[0], b[1], print_lock), shared))
    results += [run_one(name, path, print_lock) for name, path in by_itself]
    wall = time.monotonic() - started

    measured = target_dir() / "suite-times.tsv"
    measured.write_text(
        "# binary\tseconds (written by tests/run_binaries.py)\n"
        + "".join(f"{name}\t{seconds:.0f}\n" for name, seconds, _, _ in results)
    )
    print("\n| test binary | s | result |\n|---|---|---|")
    for name, seconds, ok, counts in sorted(results, key=lambda r: -r[1]):
        print(f"| {name} | {seconds:.0f} | {'ok' if ok else 'FAILED'} ({counts[0]} passed, {counts[1]} failed) |")
    failed_binaries = [name for name, _, ok, _ in results if not ok]
    passed = sum(r[3][0] for r in results)
    failed = sum(r[3][1] for r in results)
    skipped = sum(r[3][2] for r in results)
    print(f"\n{len(results)} test binaries in {wall / 60:.1f} min, {args.lanes} at a time")
    if failed_binaries:
        print("failed: " + ", ".join(failed_binaries))
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return 0 if not failed_binaries else 1


if __name__ == "__main__":
    sys.exit(main())
