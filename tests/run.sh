#!/usr/bin/env bash
# reel's whole test suite: formatting, lints, unit tests, the tests against a
# real compositor (weston 14 headless) and against a real V4L2 stateless
# driver (visl in a QEMU guest). Needs what packaging/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

export REEL_TEST_MEDIA=${REEL_TEST_MEDIA:-$PWD/target/test-media}
tests/media/generate.sh "$REEL_TEST_MEDIA"

cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
cargo build --locked --bins
cargo test --locked --no-fail-fast
