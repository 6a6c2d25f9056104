#!/bin/sh
# (in the guest) The guest sees the checkout and runs the host's binaries:
# from the checkout's directory, checks Cargo.toml is there and BINARY is
# executable (else exit 10), saves `BINARY --help` to $REEL_RESULTS/help
# (else exit 11), writes a file guest-write-probe into the checkout (which
# must land in the guest's overlay, never on the host; else exit 12), then
# prints "ok".
#
#   tests/vm/guest/checkout-probe.sh BINARY
set -eu
binary=$1
test -f Cargo.toml && test -x "$binary" || exit 10
"$binary" --help >"$REEL_RESULTS/help" || exit 11
touch guest-write-probe || exit 12
echo ok
