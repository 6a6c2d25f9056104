#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt uses (never a host name written
# into the project): the first non-security URI of debian.sources, else of
# sources.list.
set -euo pipefail
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || { echo "debian-mirror: cannot find the Debian mirror in apt's configuration" >&2; exit 1; }
echo "$mirror"
