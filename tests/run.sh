#!/usr/bin/env bash
# reel's whole test suite: formatting, lints, unit tests, the tests against a
# real compositor (weston 14 headless) and against a real V4L2 stateless
# driver (visl in a QEMU guest). Needs what packaging/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { echo "=== $* ($(date -u +%T))"; }

export REEL_TEST_MEDIA=${REEL_TEST_MEDIA:-$PWD/target/test-media}
step test media
tests/media/generate.sh "$REEL_TEST_MEDIA"
# The guest tests prepare the test bed themselves; doing it first makes its
# cost visible (tests/vm/README.md: downloads, disk, time).
step "test bed (kernel, visl, trixie root for the HEVC/AV1 oracles)"
time tests/vm/prepare.sh --trixie

step fmt
cargo fmt --check
step clippy
cargo clippy --all-targets --locked -- -D warnings
step test
cargo build --locked --bins
cargo test --locked --no-fail-fast
step done
