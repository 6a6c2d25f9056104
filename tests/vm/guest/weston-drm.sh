# (sourced, in the guest) weston 14 with its DRM backend on vkms: a real
# KMS device, so weston sends zwp_linux_dmabuf_v1 v4+ feedback (a format
# table, a main device, tranches; a scanout tranche per surface when a
# view could go on a KMS plane but its buffer cannot). The headless
# backend on llvmpipe only offers dmabuf v3.
#
#   . tests/vm/guest/weston-drm.sh
#   weston_drm_start NAME [WIDTHxHEIGHT]   # exports WAYLAND_DISPLAY=wl-NAME
#   ...clients...
#   weston_drm_stop
#
# Sourced, so it sets no shell options of its own; its functions work in a
# `set -eu` script.
#
# weston's log goes to $REEL_RESULTS/weston-NAME.log, with the debug scopes
# in WESTON_DRM_SCOPES (default log,drm-backend: plane assignment and "Need
# to update and resend the dma-buf feedback" lines; add proto for every
# request and event). The mode must be one vkms offers (its
# connector lists the usual VESA modes, 640x480 the smallest).
#
# The shell is WESTON_DRM_SHELL (default kiosk: every toplevel fullscreen);
# desktop gives windows that clients can switch to fullscreen and back, with
# no panel (its llvmpipe redraws would only slow the guest down).
#
# What makes it work (tests/vm/README.md, "weston on vkms"):
# - vkms is built by prepare.sh with vkms-render-node.patch (a render node,
#   and mmap of imported dma-bufs);
# - MESA_LOADER_DRIVER_OVERRIDE=kms_swrast: Mesa loads its llvmpipe-based
#   KMS driver as a hardware driver, so EGL reports vkms's render node as
#   the device (the software fallback reports none, and weston then sends
#   no feedback);
# - libseat's builtin backend (no seatd or logind in the guest), and no
#   input devices required (no udev database: libinput finds none).

weston_drm_start() {
    _wd_name=$1
    _wd_mode=${2:-640x480}
    _wd_log="${REEL_RESULTS:?not in the test guest}/weston-$_wd_name.log"
    if ! _wd_card=$(_weston_drm_vkms_card); then
        modprobe vkms || { echo "weston-drm: modprobe vkms failed" >&2; return 2; }
        _wd_card=$(_weston_drm_vkms_card) || { echo "weston-drm: vkms has no card node" >&2; return 2; }
    fi
    [ -e "/dev/dri/$_wd_card" ] || { echo "weston-drm: /dev/dri/$_wd_card missing" >&2; return 2; }
    if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
        XDG_RUNTIME_DIR=$(mktemp -d /dev/shm/xdg.XXXXXX)
        export XDG_RUNTIME_DIR
    fi
    chmod 700 "$XDG_RUNTIME_DIR"
    _wd_ini="$XDG_RUNTIME_DIR/weston-drm-$_wd_name.ini"
    _wd_shell=${WESTON_DRM_SHELL:-kiosk}
    printf '[core]\nrequire-input=false\nidle-time=0\n[output]\nname=Virtual-1\nmode=%s\n' \
        "$_wd_mode" >"$_wd_ini"
    printf '[shell]\npanel-position=none\nbackground-color=0xff002244\n' >>"$_wd_ini"
    LIBSEAT_BACKEND=builtin MESA_LOADER_DRIVER_OVERRIDE=kms_swrast \
        weston --config="$_wd_ini" --backend=drm --drm-device="$_wd_card" --renderer=gl \
        --shell="$_wd_shell" --debug --logger-scopes="${WESTON_DRM_SCOPES:-log,drm-backend}" \
        --socket="wl-$_wd_name" >"$_wd_log" 2>&1 &
    WESTON_PID=$!
    export WAYLAND_DISPLAY="wl-$_wd_name"
    _wd_i=0
    until wayland-info 2>/dev/null | grep -q xdg_wm_base; do
        _wd_i=$((_wd_i + 1))
        if [ $_wd_i -gt 600 ] || ! kill -0 "$WESTON_PID" 2>/dev/null; then
            echo "weston-drm: weston did not come up on /dev/dri/$_wd_card; its log:" >&2
            cat "$_wd_log" >&2
            return 3
        fi
        sleep 0.2
    done
}

weston_drm_stop() {
    [ -n "${WESTON_PID:-}" ] || return 0
    kill "$WESTON_PID" 2>/dev/null || true
    wait "$WESTON_PID" 2>/dev/null || true
    WESTON_PID=
}

# The card node (card0...) of vkms's device (a platform device named vkms,
# bound to no platform driver).
_weston_drm_vkms_card() {
    for _wd_c in /sys/class/drm/card[0-9]*; do
        case "$_wd_c" in *-*) continue ;; esac
        [ "$(basename "$(readlink -f "$_wd_c/device")")" = vkms ] || continue
        basename "$_wd_c"
        return 0
    done
    return 1
}
