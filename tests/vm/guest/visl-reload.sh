#!/bin/sh
# Inside the guest: loads visl again with the given module parameters (none:
# visl's defaults), e.g. the real-driver behaviours of
# tests/vm/visl-personalities.patch (hold_capture_buf, output_sizeimage,
# error_frames, fail_requests, stall_jobs, capture_cache_hints, capture_tiled,
# capture_memory_max, draw_pictures, the profile and level menus) or its bitstream dump, and
# waits for its video node.
#
#   tests/vm/guest/visl-reload.sh [PARAM=VALUE...]
#
# Exits 2 if visl cannot be loaded or its node does not appear.
set -eu
rmmod visl 2>/dev/null || true
modprobe visl "$@" || { echo "visl-reload: cannot load visl $*" >&2; exit 2; }
# udev is not running: wait for the node the driver registers.
i=0
while [ ! -e /dev/video0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -e /dev/video0 ] || { echo "visl-reload: no /dev/video0" >&2; exit 2; }
