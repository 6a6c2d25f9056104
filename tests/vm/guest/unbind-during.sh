#!/bin/sh
# (in the guest) Runs COMMAND with a time limit and, once its stderr holds
# FRAMES lines saying "V4L2 frame out" (run it with RUST_LOG=reel=debug),
# unbinds visl from its driver: the device disappears mid-stream, as a
# decoder does when its driver is unloaded or a USB/PCIe decoder is
# removed. Saves NAME.out, NAME.log and NAME.rc (124 when killed at the
# limit) in $REEL_RESULTS, and NAME.unbound when the unbind happened. Load
# visl again afterwards (visl-reload.sh) for later runs.
#
#   tests/vm/guest/unbind-during.sh NAME FRAMES SECONDS COMMAND [ARGS...]
set -eu
name=$1
frames=$2
seconds=$3
shift 3
out="$REEL_RESULTS/$name"
rm -f "$out.unbound"
timeout "$seconds" "$@" >"$out.out" 2>"$out.log" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
    if [ "$(grep -c 'V4L2 frame out' "$out.log" 2>/dev/null || true)" -ge "$frames" ]; then
        echo visl.0 >/sys/bus/platform/drivers/visl/unbind && date +%s.%N >"$out.unbound"
        break
    fi
    sleep 0.02
done
rc=0
wait "$pid" || rc=$?
echo "$rc" >"$out.rc"
