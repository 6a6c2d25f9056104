#!/usr/bin/env bash
# Captures GStreamer's oracles again and replaces the store,
# tests/data/oracles/ (see tests/support/oracle.rs): every clip of
# support::oracle::CLIPS decoded through visl by GStreamer's v4l2sl*dec,
# GStreamer 1.22 in a guest on the host's root (H.264, VP8, VP9, MPEG-2) and
# 1.26 in a guest on the debootstrapped trixie root (HEVC, AV1), one boot
# each (minutes under TCG). Fails, leaving the store as it was, if a capture
# fails or a root's GStreamer is not the one its oracles come from
# (bookworm's 1.22, trixie's 1.26). Then checks the new store
# (tests/oracle_store.rs).
#
# Run it when a clip of tests/media/generate.sh changed (the tests say so,
# naming the clip), and commit tests/data/oracles/.
#
#   tests/oracles/refresh.sh
#
# Environment: REEL_TEST_MEDIA (the clips, default target/test-media), and
# tests/vm/prepare.sh's and run.sh's (tests/vm/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

export REEL_TEST_MEDIA=${REEL_TEST_MEDIA:-$PWD/target/test-media}
tests/media/generate.sh "$REEL_TEST_MEDIA"
# The host-root test bed and the trixie root (minutes when cold).
tests/vm/prepare.sh --trixie

REEL_ORACLE_REFRESH=1 cargo test --locked --test oracle_store -- \
    --ignored --exact refresh_the_store --nocapture
cargo test --locked --test oracle_store

echo "refresh: the store, tests/data/oracles ($(du -sh tests/data/oracles | cut -f1)):"
grep -v '^#' tests/data/oracles/index.txt | awk '{ n[$4]++ } END { for (v in n) printf "  GStreamer %s: %d clips\n", v, n[v] }'
