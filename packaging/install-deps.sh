#!/usr/bin/env bash
# Installs everything reel needs to build, run and test on Debian bookworm.
# Idempotent; run as root or through sudo.
#
#   packaging/install-deps.sh            build + test dependencies
#   packaging/install-deps.sh --runtime  only what `reel` needs to run
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
    exec sudo -E "$0" "$@"
fi

mode=${1:-all}
export DEBIAN_FRONTEND=noninteractive

# bookworm-backports carries the 6.12 uAPI headers (v4l2r's bindings need AV1
# and other >= 6.5 definitions), weston 14 and a Mesa whose llvmpipe imports
# dmabufs. The mirror is read from the machine's own apt configuration.
mirror_uri() {
    "$(dirname "$0")/debian-mirror.sh"
}

backports=/etc/apt/sources.list.d/reel-bookworm-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat >"$backports" <<SRC
Types: deb
URIs: $(mirror_uri)
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

stamp=/var/lib/apt/periodic/reel-update-stamp
if [ ! -f "$stamp" ] || [ -n "$(find /etc/apt/sources.list.d -newer "$stamp" 2>/dev/null)" ] \
    || [ "$(find "$stamp" -mmin +360 2>/dev/null)" ]; then
    apt-get update -q
    mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi

install() { apt-get install -y -q --no-install-recommends "$@"; }

runtime=(libavcodec59 libavformat59 libavutil57 libswscale6 libswresample4 libavfilter8 libass9 libxkbcommon0
         libasound2 fonts-dejavu-core)
build=(build-essential pkg-config clang libclang-dev
       libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
       libavfilter-dev libavdevice-dev libswresample-dev libxkbcommon-dev
       libasound2-dev libass-dev)
tests=(ffmpeg v4l-utils strace valgrind sway adwaita-icon-theme mpv python3-venv
       busybox-static kmod cpio xz-utils zstd bc make gcc patch debootstrap
       gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
       gstreamer1.0-plugins-bad gstreamer1.0-libav gstreamer1.0-alsa
       debhelper lintian desktop-file-utils man-db systemd tesseract-ocr
       pipewire pipewire-bin pipewire-alsa wireplumber libspa-0.2-modules dbus-daemon
       python3-gi gir1.2-gst-rtsp-server-1.0)
# valgrind: callgrind's instruction counts in the guest benchmark
# (benches/guest/compare.sh).
# gstreamer1.0-alsa: GStreamer's sound in the V4L2-path audio benchmark
# (benches/guest-audio-cost.sh, and its smoke run, benches/smoke.sh).
# fonts-dejavu-core: the OSD's font (DejaVu Sans Mono). tesseract-ocr: reads
# the OSD off weston's screenshots (tests/host/osd_weston.rs).
# debhelper ... systemd: the Debian package's build and checks
# (tests/package_deb.rs: lintian, desktop-file-validate, man, systemd-analyze).
# pipewire ... dbus-daemon: the sound server the audio tests start per test
# (tests/support/sound_server.rs; wireplumber needs a session bus), reached by
# reel through ALSA's PipeWire plugin; pw-record records what it plays.
# python3-gi gir1.2-gst-rtsp-server-1.0: GStreamer's RTSP server for the
# RTSP tests (tests/support/rtsp_server.py).
# sway: the compositor for what weston lacks (idle inhibit, decorations, a
# virtual pointer), tests/host/kiosk_sway.rs.
# From bookworm-backports: the compositor the tests run against, its Mesa, and
# a QEMU that matches the qemu-utils these machines ship.
tests_bpo=(qemu-system-x86 weston libegl-mesa0 libgl1-mesa-dri mesa-libgallium libgbm1 wayland-utils)

case "$mode" in
    --runtime)
        install "${runtime[@]}"
        ;;
    all|--all)
        install "${runtime[@]}" "${build[@]}" "${tests[@]}"
        install -t bookworm-backports linux-libc-dev "${tests_bpo[@]}"
        ;;
    *)
        echo "usage: $0 [--runtime]" >&2
        exit 2
        ;;
esac

# A third-party mpv IPC client the JSON IPC tests drive reel with, pinned,
# in a venv inside the checkout's target/ (bookworm's pip refuses system
# installs); tests/host/ipc_mpv.rs finds it there.
if [ "$mode" != "--runtime" ]; then
    project=$(cd "$(dirname "$0")/.." && pwd)
    venv=${REEL_IPC_VENV:-$project/target/mpv-ipc-venv}
    pin='python-mpv-jsonipc==1.5.0'
    if ! "$venv/bin/pip" freeze 2>/dev/null | grep -qx "$pin"; then
        [ -x "$venv/bin/pip" ] || /usr/bin/python3 -m venv "$venv"
        "$venv/bin/pip" install -q "$pin"
    fi
    # fluster, the decoder conformance framework, for the tests of
    # packaging/fluster/reel_fluster.py (tests/host/fluster.rs).
    fluster_venv=${REEL_FLUSTER_VENV:-$project/target/fluster-venv}
    fluster_pin='fluster-conformance==0.8.0'
    if ! "$fluster_venv/bin/pip" freeze 2>/dev/null | grep -qx "$fluster_pin"; then
        [ -x "$fluster_venv/bin/pip" ] || /usr/bin/python3 -m venv "$fluster_venv"
        "$fluster_venv/bin/pip" install -q "$fluster_pin"
    fi
    if [ -n "${SUDO_UID:-}" ]; then
        chown -R "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$venv" "$fluster_venv"
    fi
fi

# The Rust toolchain: the one on PATH, or rustup's stable if there is none.
if [ "$mode" != "--runtime" ] && ! command -v cargo >/dev/null 2>&1; then
    install rustup 2>/dev/null || install cargo
fi
echo "install-deps: done"
