#!/usr/bin/env bash
# Prepares the V4L2 stateless test bed: Debian's 6.12 kernel from
# bookworm-backports, the out-of-tree modules it lacks (v4l2-mem2mem, visl,
# vicodec, and vkms with vkms-render-node.patch for weston's DRM backend) and
# a busybox initramfs, all cached under tests/vm/cache/.
# Packages are fetched with `apt-get download` and extracted, never installed.
# Re-running with a complete cache is a fast no-op.
#
#   tests/vm/prepare.sh            host-root test bed
#   tests/vm/prepare.sh --trixie   also the debootstrapped trixie root
#                                  (GStreamer 1.26: HEVC and AV1 oracles)
#
# Environment: REEL_VM_CACHE (cache directory), REEL_VM_SUITE (suite the
# kernel is taken from, default bookworm-backports).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${REEL_VM_CACHE:-$here/cache}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
suite=${REEL_VM_SUITE:-bookworm-backports}
want_trixie=0
[ "${1:-}" = "--trixie" ] && want_trixie=1

log() { echo "prepare: $*" >&2; }
die() { echo "prepare: error: $*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for tool in apt-get apt-cache dpkg-deb make gcc readelf depmod cpio busybox flock xz zstd patch qemu-system-x86_64; do
    command -v "$tool" >/dev/null || die "missing '$tool': run packaging/install-deps.sh"
done
# The initramfs needs a statically linked busybox (package busybox-static).
[ -x /bin/busybox ] && ! readelf -l /bin/busybox | grep -q "program interpreter" || die "a static /bin/busybox is needed (busybox-static)"

# One prepare at a time (cargo runs guest tests in parallel).
exec 9>"$cache/.prepare.lock"
flock 9

# --- host-root test bed ------------------------------------------------------
# Each version of the kernel recipe below builds its own bed-<digest>
# directory, so that checkouts with different versions of this script can
# share a cache without rebuilding each other's; `current` names the bed of
# the last successful run. The initramfs is remade when the guest init
# changes. Downloads are shared.
kernel_digest=$( (echo "$suite"; sed -n '/^# >>> kernel/,/^# <<< kernel/p' "$0"; cat "$here/vkms-render-node.patch" "$here/visl-personalities.patch") \
    | sha256sum | cut -d' ' -f1)
digest=$(cat "$0" "$here/guest/init" | sha256sum | cut -d' ' -f1)
bed_name="bed-${kernel_digest:0:16}"
bed="$cache/$bed_name"
mkdir -p "$bed"
t_all=$(now)
# >>> kernel (the kernel cache is rebuilt when this part changes)
if [ -f "$bed/kernel.ready" ] && [ "$(cat "$bed/kernel.ready")" = "$kernel_digest" ]; then
    kver=$(cat "$bed/kver")
    root="$bed/kernel"
    mods="$root/lib/modules/$kver"
else
    rm -f "$bed/kernel.ready" "$bed/ready"

    # The newest 6.12 kernel of the suite, resolved from apt's own lists so
    # that this keeps working when the suite moves on.
    pkgver=$(apt-cache madison linux-source-6.12 2>/dev/null \
        | awk -F'|' -v s="$suite/" 'index($3, s) { gsub(/ /, "", $2); print $2 }' \
        | sort -V | tail -1)
    [ -n "$pkgver" ] || die "no linux-source-6.12 in $suite (is $suite in apt's sources? run packaging/install-deps.sh and apt-get update)"
    upstream=${pkgver%%-*}
    abi="$upstream+deb12"
    kver="$abi-amd64"
    log "kernel $kver (package version $pkgver from $suite)"

    debs="$cache/debs"
    mkdir -p "$debs"
    pkgs=("linux-image-$kver-unsigned" "linux-headers-$kver" "linux-headers-$abi-common"
          "linux-kbuild-$abi" "linux-source-6.12")
    t=$(now)
    missing=()
    for p in "${pkgs[@]}"; do
        ls "$debs/${p}_"*"_"*.deb >/dev/null 2>&1 || missing+=("$p=$pkgver")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        # apt-get download writes to the current directory; _apt must be able to.
        (cd "$debs" && chmod 777 . && apt-get download -q "${missing[@]}") \
            || die "apt-get download failed"
    fi
    log "download: $(du -sm "$debs" | cut -f1) MB in $(elapsed "$t") s"

    # Extraction: one tree holding the image, headers and kbuild as they would
    # be installed, plus the four driver sources out of the source tarball.
    t=$(now)
    root="$bed/kernel"
    rm -rf "$root" "$bed/src"
    mkdir -p "$root" "$bed/src"
    for p in "${pkgs[@]:0:4}"; do
        dpkg-deb -x "$debs/${p}_"*.deb "$root"
    done
    srcdeb=$(ls "$debs"/linux-source-6.12_*.deb)
    tarball=$(dpkg-deb -c "$srcdeb" | awk '{print $6}' | grep -E 'linux-source-6\.12\.tar\.(xz|zst|bz2)$' | head -1)
    [ -n "$tarball" ] || die "no source tarball in $srcdeb"
    dpkg-deb --fsys-tarfile "$srcdeb" | tar -x -C "$bed/src" "$tarball"
    tar -x -C "$bed/src" -f "$bed/src/$tarball" --strip-components=1 \
        linux-source-6.12/drivers/media/test-drivers/visl \
        linux-source-6.12/drivers/media/test-drivers/vicodec \
        linux-source-6.12/drivers/media/v4l2-core/v4l2-mem2mem.c \
        linux-source-6.12/include/media/v4l2-mem2mem.h \
        linux-source-6.12/drivers/gpu/drm/vkms
    patch -s -d "$bed/src" -p1 <"$here/vkms-render-node.patch" || die "vkms-render-node.patch does not apply"
    # Real drivers' behaviours, switched on by visl's module parameters.
    patch -s -d "$bed/src" -p1 <"$here/visl-personalities.patch" || die "visl-personalities.patch does not apply"
    rm -f "$bed/src/$tarball"
    rm -rf "$bed/src/usr"
    log "extract: $(elapsed "$t") s"

    # The headers' top Makefile includes the common headers by absolute path.
    hdr="$root/usr/src/linux-headers-$kver"
    [ -d "$hdr" ] || die "headers tree $hdr missing"
    sed -i "s|/usr/src/linux-headers-$abi-common|$root/usr/src/linux-headers-$abi-common|g" "$hdr/Makefile"
    # Out-of-tree build of the four modules.
    t=$(now)
    build="$bed/build"
    rm -rf "$build"
    mkdir -p "$build/m2m" "$build/visl" "$build/vicodec" "$build/vkms"
    cp "$bed/src/drivers/media/v4l2-core/v4l2-mem2mem.c" "$build/m2m/"
    cat >"$build/m2m/Makefile" <<'MK'
obj-m += v4l2-mem2mem.o
MK
    cp "$bed/src/drivers/media/test-drivers/visl/"*.[ch] "$build/visl/"
    # The trace headers expect an in-tree build; point them at this directory.
    sed -i 's|^#define TRACE_INCLUDE_PATH .*|#define TRACE_INCLUDE_PATH .|' "$build/visl/"visl-trace-*.h
    cat >"$build/visl/Makefile" <<'MK'
visl-y := visl-core.o visl-video.o visl-dec.o visl-trace-points.o visl-debugfs.o
obj-m += visl.o
ccflags-y += -I$(src) -DCONFIG_VISL_DEBUGFS=1
MK
    cp "$bed/src/drivers/media/test-drivers/vicodec/"*.[ch] "$build/vicodec/"
    cat >"$build/vicodec/Makefile" <<'MK'
vicodec-objs := vicodec-core.o codec-fwht.o codec-v4l2-fwht.o
obj-m += vicodec.o
MK
    # vkms needs drm, drm_kms_helper and drm_shmem_helper: Debian builds them
    # as modules (CONFIG_DRM_VKMS is not set). Its own Makefile's object list.
    cp "$bed/src/drivers/gpu/drm/vkms/"*.[ch] "$build/vkms/"
    sed -n '/^vkms-y/,/^$/p' "$bed/src/drivers/gpu/drm/vkms/Makefile" >"$build/vkms/Makefile"
    echo 'obj-m += vkms.o' >>"$build/vkms/Makefile"
    kmake() {
        make -s -C "$hdr" M="$1" CONFIG_DEBUG_INFO_BTF_MODULES= -j"$(nproc)" "${@:2}" modules \
            >"$1/build.log" 2>&1 || { cat "$1/build.log" >&2; die "module build in $1 failed"; }
    }
    kmake "$build/m2m"
    kmake "$build/visl" KBUILD_EXTRA_SYMBOLS="$build/m2m/Module.symvers"
    kmake "$build/vicodec" KBUILD_EXTRA_SYMBOLS="$build/m2m/Module.symvers"
    kmake "$build/vkms"
    mods="$root/lib/modules/$kver"
    mkdir -p "$mods/updates"
    cp "$build/m2m/v4l2-mem2mem.ko" "$build/visl/visl.ko" "$build/vicodec/vicodec.ko" \
        "$build/vkms/vkms.ko" "$mods/updates/"
    log "module build: $(elapsed "$t") s"
    t=$(now)
    depmod -b "$root" "$kver"
    log "depmod: $(elapsed "$t") s"
    cp "$root/boot/vmlinuz-$kver" "$bed/vmlinuz"
    echo "$kver" >"$bed/kver"
    echo "$kernel_digest" >"$bed/kernel.ready"
fi
# <<< kernel

if [ ! -f "$bed/ready" ] || [ "$(cat "$bed/ready")" != "$digest" ]; then

    # Initramfs: static busybox, the few modules needed to reach the 9p root
    # (busybox insmod cannot read .ko.xz), and the init script.
    t=$(now)
    ird="$bed/initramfs"
    rm -rf "$ird"
    mkdir -p "$ird"/{bin,dev,proc,sys,mnt,lower,upper,newroot,results,lib/modules}
    cp /bin/busybox "$ird/bin/busybox"
    ln -s busybox "$ird/bin/sh"
    install -m 0755 "$here/guest/init" "$ird/init"
    # What the guest needs before its root is mounted, in load order
    # (dependencies first, from modules.dep); built-in ones are skipped.
    order=""
    add_module() {
        local name=$1 line path dep
        line=$(grep -E "(^|/)$name\.ko(\.xz|\.zst)?:" "$mods/modules.dep" || true)
        if [ -z "$line" ]; then
            grep -qE "(^|/)$name\.ko$" "$mods/modules.builtin" \
                || die "module $name neither built in nor shipped"
            return
        fi
        path=${line%%:*}
        for dep in ${line#*:}; do
            dep=$(basename "$dep"); add_module "${dep%%.ko*}"
        done
        case " $order " in *" $name "*) return ;; esac
        case "$path" in
            *.xz) xz -dc "$mods/$path" >"$ird/lib/modules/$name.ko" ;;
            *.zst) zstd -qdc "$mods/$path" >"$ird/lib/modules/$name.ko" ;;
            *) cp "$mods/$path" "$ird/lib/modules/$name.ko" ;;
        esac
        order="$order $name"
    }
    for m in virtio_pci 9pnet_virtio 9p overlay; do
        add_module "$m"
    done
    echo "$order" >"$ird/lib/modules/order"
    (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$bed/initramfs.cpio.gz"
    log "initramfs: $(elapsed "$t") s"
    echo "$digest" >"$bed/ready"
    log "host-root test bed ready in $(elapsed "$t_all") s ($(du -sm "$bed" | cut -f1) MB in $bed)"
fi
if [ "$(readlink "$cache/current" 2>/dev/null)" != "$bed_name" ]; then
    ln -sfn "$bed_name" "$cache/current"
    # Beds of older recipes.
    for old in "$cache"/bed-*; do
        [ "$old" = "$bed" ] || rm -rf "$old"
    done
fi

# KVM when the host has a working one (some hosts' /dev/kvm cannot run an
# ordinary guest), TCG otherwise; decided once by booting the guest.
if [ ! -f "$cache/accel" ]; then
    accel=tcg
    if [ -w /dev/kvm ] && "$here/run.sh" --accel kvm --no-modules --timeout 60 -- true >/dev/null 2>&1; then
        accel=kvm
    fi
    echo "$accel" >"$cache/accel"
    log "guest accelerator: $accel"
fi

# --- trixie root ---------------------------------------------------------------
if [ "$want_trixie" = 1 ]; then
    "$here/prepare-trixie.sh" "$cache"
fi
