#!/usr/bin/env bash
# A clean Debian bookworm root for tests/package_deb.rs, which installs
# reel's .deb into a copy of it with the root's own apt: debootstrap
# --variant=minbase plus man-db (to read the man page) and systemd (to verify
# the units against what the package installed), into DIR/bookworm.
# A no-op when the root is complete and this script unchanged
# (DIR/bookworm.ready holds its digest); apt's package lists are refreshed
# when older than six hours, so that the mirror still has what they name.
#
#   packaging/test-root.sh DIR
set -euo pipefail

dir=${1:?usage: test-root.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "test-root: $*" >&2; }
die() { echo "test-root: error: $*" >&2; exit 1; }
command -v debootstrap >/dev/null || die "debootstrap missing: run packaging/install-deps.sh"

mkdir -p "$dir"
exec 9>"$dir/lock"
flock 9

root="$dir/bookworm"
digest=$(sha256sum "$0" | cut -d' ' -f1)
if [ ! -f "$dir/bookworm.ready" ] || [ "$(cat "$dir/bookworm.ready")" != "$digest" ]; then
    mirror=$("$here/debian-mirror.sh")
    tmp="$dir/bookworm.tmp"
    rm -rf "$root" "$tmp" "$dir/bookworm.ready"
    start=$(date +%s)
    log "debootstrap bookworm (minbase) from $mirror"
    debootstrap --variant=minbase --include=man-db,systemd \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        bookworm "$tmp" "$mirror" >"$dir/debootstrap.log" 2>&1 \
        || { tail -30 "$dir/debootstrap.log" >&2; die "debootstrap failed (log: $dir/debootstrap.log)"; }
    # Packages installed later start no service.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod +x "$tmp/usr/sbin/policy-rc.d"
    log "bookworm root in $(( $(date +%s) - start )) s"
    mv "$tmp" "$root"
    echo "$digest" >"$dir/bookworm.ready"
fi

stamp="$root/var/lib/apt/reel-lists-stamp"
if [ ! -f "$stamp" ] || [ "$(find "$stamp" -mmin +360)" ]; then
    chroot "$root" apt-get update -q >>"$dir/debootstrap.log" 2>&1 \
        || { tail -30 "$dir/debootstrap.log" >&2; die "apt-get update in the root failed"; }
    touch "$stamp"
fi
