#!/usr/bin/env bash
# The benchmarks' smoke runs: each guest benchmark (benches/guest-compare.sh,
# guest-ab.sh, guest-audio-cost.sh) once on a small clip with this build,
# every figure of its table measured for every player (tests/guest_bench.rs).
# Not part of tests/run.sh (15 to 17 minutes under TCG); run it when
# benches/ changes and before making the figures of BENCHMARKS.md.
#
#   benches/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export REEL_TEST_MEDIA=${REEL_TEST_MEDIA:-$PWD/target/test-media}
tests/media/generate.sh "$REEL_TEST_MEDIA"
tests/vm/prepare.sh
cargo test --locked --test guest_bench -- --ignored
