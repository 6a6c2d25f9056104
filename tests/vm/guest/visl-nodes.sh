#!/bin/sh
# (in the guest) What the V4L2 test bed offers, on stdout: each video node's
# driver info (v4l2-ctl -D), each media device's graph (media-ctl -p), the
# visl_* trace event groups, and the files of visl's debugfs directory.
#
#   tests/vm/guest/visl-nodes.sh
set -eu
for d in /dev/video*; do v4l2-ctl -d "$d" -D; done
for m in /dev/media*; do media-ctl -d "$m" -p; done
ls /sys/kernel/tracing/events | grep '^visl_'
ls /sys/kernel/debug/visl
