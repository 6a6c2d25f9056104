#!/usr/bin/env bash
# Debootstraps a minimal Debian trixie root with GStreamer 1.26 (whose
# v4l2codecs decode HEVC and AV1 through visl, unlike bookworm's 1.22) into
# CACHE/trixie, for tests/vm/run.sh --root trixie. Called by
# `tests/vm/prepare.sh --trixie` (which holds the cache lock); a no-op when
# the root is complete and this script is unchanged.
#
#   tests/vm/prepare-trixie.sh CACHE
set -euo pipefail

cache=${1:?usage: prepare-trixie.sh CACHE}
log() { echo "prepare-trixie: $*" >&2; }
die() { echo "prepare-trixie: error: $*" >&2; exit 1; }
command -v debootstrap >/dev/null || die "debootstrap missing: run packaging/install-deps.sh"

digest=$(sha256sum "$0" | cut -d' ' -f1)
if [ -f "$cache/trixie.ready" ] && [ "$(cat "$cache/trixie.ready")" = "$digest" ]; then
    exit 0
fi

# The machine's own Debian mirror, from apt's configuration.
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || die "cannot find the Debian mirror in apt's configuration"

packages=(kmod v4l-utils gstreamer1.0-tools gstreamer1.0-plugins-base
          gstreamer1.0-plugins-good gstreamer1.0-plugins-bad)
start=$(date +%s)
tmp="$cache/trixie.tmp"
# Never leave (or delete through) a proc mount in the half-made root.
umount "$tmp/proc" 2>/dev/null || true
trap 'umount "$tmp/proc" 2>/dev/null || true' EXIT
rm -rf "$cache/trixie" "$tmp" "$cache/trixie.ready"
log "debootstrap trixie (minbase) from $mirror"
debootstrap --variant=minbase \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    trixie "$tmp" "$mirror" >"$cache/trixie-debootstrap.log" 2>&1 \
    || { tail -30 "$cache/trixie-debootstrap.log" >&2; die "debootstrap failed (log: $cache/trixie-debootstrap.log)"; }
log "minbase in $(( $(date +%s) - start )) s; installing GStreamer"
# debootstrap's resolver cannot take GStreamer's alternatives: let the root's
# own apt do it, without starting any service.
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod +x "$tmp/usr/sbin/policy-rc.d"
mount -t proc proc "$tmp/proc"
set +e
{
    chroot "$tmp" apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y -q --no-install-recommends "${packages[@]}"
} >>"$cache/trixie-debootstrap.log" 2>&1
status=$?
set -e
umount "$tmp/proc"
[ "$status" = 0 ] || { tail -30 "$cache/trixie-debootstrap.log" >&2; die "apt-get in the trixie root failed (log: $cache/trixie-debootstrap.log)"; }
chroot "$tmp" apt-get clean
rm -rf "$tmp/var/lib/apt/lists/"*_Packages
mkdir -p "$tmp/lib/modules" "$tmp/results"
mv "$tmp" "$cache/trixie"
echo "$digest" >"$cache/trixie.ready"
log "trixie root ready in $(( $(date +%s) - start )) s ($(du -sm "$cache/trixie" | cut -f1) MB)"
