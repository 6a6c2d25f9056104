#!/bin/sh
# (in the guest) A V4L2 memory-to-memory device's OUTPUT and CAPTURE
# formats and its controls with their menus, as v4l2-ctl prints them.
#
#   tests/vm/guest/v4l2-formats.sh [DEVICE]     (default /dev/video0)
set -eu
device=${1:-/dev/video0}
v4l2-ctl -d "$device" --list-formats-out
v4l2-ctl -d "$device" --list-formats
v4l2-ctl -d "$device" --list-ctrls-menus
