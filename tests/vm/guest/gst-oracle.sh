#!/bin/sh
# Inside the guest: decodes clips with GStreamer's v4l2sl* elements through
# visl and saves one visl trace per clip (see visl-trace.sh) as
# $REEL_RESULTS/NAME.trace, the OUTPUT buffers visl received as
# NAME.bitstream/ (see visl-bitstream.sh, which reloads visl for each clip),
# plus GStreamer's messages as NAME.gst.log, and the root's GStreamer version
# and Debian codename (gst-version.sh) as gst-version.txt.
#
#   tests/vm/guest/gst-oracle.sh ELEMENT:CLIP:NAME...
# e.g. v4l2slh264dec:target/test-media/h264_baseline.mp4:h264_baseline
# Exit status: the number of clips that failed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
failed=0
# The registry scan takes seconds on TCG: do it once, outside the traces.
gst-inspect-1.0 >/dev/null 2>&1 || true
"$here/gst-version.sh" >"$REEL_RESULTS/gst-version.txt"
for spec in "$@"; do
    element=${spec%%:*}
    rest=${spec#*:}
    clip=${rest%:*}
    name=${rest##*:}
    start=$(date +%s.%N)
    rc=0
    VISL_TRACE_NAME="$name.trace" "$here/visl-bitstream.sh" "$name" "$here/visl-trace.sh" \
        timeout 120 gst-launch-1.0 -q filesrc location="$clip" ! parsebin ! "$element" ! fakesink \
        >"$REEL_RESULTS/$name.gst.log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    echo "$name $element rc=$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')s"
    [ "$rc" = 0 ] || failed=$((failed + 1))
done
exit $failed
