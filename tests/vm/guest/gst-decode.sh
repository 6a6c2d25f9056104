#!/bin/sh
# (in the guest) Decodes CLIP with GStreamer's ELEMENT (a v4l2sl*dec, so
# through the stateless decoder) into a fakesink.
#
#   tests/vm/guest/gst-decode.sh ELEMENT CLIP
set -eu
gst-launch-1.0 -q filesrc location="$2" ! parsebin ! "$1" ! fakesink
