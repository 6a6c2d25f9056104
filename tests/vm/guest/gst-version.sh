#!/bin/sh
# (in the guest) The root's GStreamer version (gst-launch-1.0 --version)
# and its Debian codename, one line.
#
#   tests/vm/guest/gst-version.sh
set -eu
gst-launch-1.0 --version
. /etc/os-release
echo "$VERSION_CODENAME"
