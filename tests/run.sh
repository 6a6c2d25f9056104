#!/usr/bin/env bash
# reel's whole test suite: formatting, lints, unit tests, the tests against a
# real compositor (weston 14 headless) and against a real V4L2 stateless
# driver (visl in a QEMU guest). Needs what packaging/install-deps.sh installs.
# Prints each step's minutes at the end.
#
# The test binaries run two at a time (tests/run_binaries.py; REEL_TEST_LANES
# sets how many). The benchmarks' smoke runs are not part of it:
# benches/smoke.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

steps=()
step_name="" step_start=0
step() {
    end_step
    step_name=$*
    step_start=$(date +%s)
    echo "=== $* ($(date -u +%T))"
}
end_step() {
    if [ -n "$step_name" ]; then
        steps+=("$(printf '%6.1f min  %s' "$(echo "($(date +%s) - $step_start) / 60" | bc -l)" "$step_name")")
    fi
    step_name=""
}
suite_start=$(date +%s)
report() {
    rc=$?
    end_step
    echo "=== time by step"
    printf '%s\n' "${steps[@]}"
    printf '%6.1f min  tests/run.sh in all (exit %s)\n' \
        "$(echo "($(date +%s) - $suite_start) / 60" | bc -l)" "$rc"
}
trap report EXIT

export REEL_TEST_MEDIA=${REEL_TEST_MEDIA:-$PWD/target/test-media}
step test media
tests/media/generate.sh "$REEL_TEST_MEDIA"
# The guest tests prepare the test bed themselves; doing it first makes its
# cost visible (tests/vm/README.md: downloads, disk, time). The trixie root
# (GStreamer 1.26) only serves tests/oracles/refresh.sh.
step "test bed (kernel, visl)"
tests/vm/prepare.sh

step fmt
cargo fmt --check
step clippy
cargo clippy --all-targets --locked -- -D warnings
step "build"
cargo build --locked --bins
step "doc tests"
cargo test --locked --doc
step "test binaries"
tests/run_binaries.py -- --locked
