#!/usr/bin/env bash
# Boots the test guest (Debian 6.12 kernel under QEMU, host root shared
# read-only over 9p), runs one shell script inside and powers off.
#
#   tests/vm/run.sh [options] [--] [COMMAND...]
#     --dir DIR         result share (default: a new temporary directory). If
#                       COMMAND is empty, DIR/script.sh is run.
#     --root host|trixie  guest root (default host)
#     --timeout SECS    kill the guest after SECS (default 120)
#     --module 'NAME ARGS'  modprobe NAME ARGS before the command (repeatable;
#                       default: visl)
#     --no-modules      load nothing
#     --env 'K=V'       environment for the command (repeatable)
#     --bind PATH       with --root trixie: also show this host directory at
#                       its path (the checkout always is; repeatable)
#     --accel kvm|tcg   default: $REEL_VM_ACCEL, else what prepare.sh found
#     --audio           a sound card (QEMU's AC97) whose sound goes nowhere
#                       in real time (the `none` audio backend); load its
#                       driver with --module snd_intel8x0 (intel-hda's codec
#                       does not answer snd_hda_intel's probe under TCG)
#
# In DIR afterwards: stdout, stderr, exit_code (the command's), console.log
# (serial console), dmesg, out/ (the command's files: $REEL_RESULTS in the
# guest). Exit status: 0 when the command ran (whatever its exit code), 124 on
# timeout, 1 when the guest failed; the console log is printed on failure.
# Runs at most $REEL_VM_SLOTS (default 2) guests at once per cache.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# Resolved: the guest sees the host root, where a symlinked cache would
# point outside the path it mounts.
cache=$(readlink -f "${REEL_VM_CACHE:-$here/cache}")
project=$(cd "$here/../.." && pwd)

dir="" root=host timeout=120 accel=${REEL_VM_ACCEL:-}
modules=() envs=() binds=() default_modules=1 audio_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir=$2; shift 2 ;;
        --root) root=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --module) modules+=("$2"); shift 2 ;;
        --no-modules) default_modules=0; shift ;;
        --env) envs+=("$2"); shift 2 ;;
        --bind) binds+=("$2"); shift 2 ;;
        --accel) accel=$2; shift 2 ;;
        --audio) audio_args=(-audiodev none,id=snd0 -device AC97,audiodev=snd0); shift ;;
        --) shift; break ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done

[ -f "$cache/current/ready" ] || { echo "run.sh: test bed not prepared: run tests/vm/prepare.sh" >&2; exit 1; }
# The bed this run uses, fixed now in case a prepare switches `current`.
bed=$(readlink -f "$cache/current")
if [ -z "$dir" ]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/reel-guest.XXXXXX")
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ $# -gt 0 ]; then
    printf '%s\n' "$*" >"$dir/script.sh"
fi
[ -f "$dir/script.sh" ] || { echo "run.sh: no command and no $dir/script.sh" >&2; exit 2; }
rm -f "$dir/exit_code" "$dir/stdout" "$dir/stderr" "$dir/console.log" "$dir/guest-error"

case "$root" in
    host) root_path=/ ;;
    trixie)
        root_path="$cache/trixie"
        [ -f "$cache/trixie.ready" ] || { echo "run.sh: trixie root not prepared: run tests/vm/prepare.sh --trixie" >&2; exit 1; }
        ;;
    *) echo "run.sh: --root must be host or trixie" >&2; exit 2 ;;
esac

if [ "$default_modules" = 1 ] && [ ${#modules[@]} -eq 0 ]; then
    modules=(visl)
fi
: >"$dir/modules"
for m in "${modules[@]}"; do echo "$m" >>"$dir/modules"; done

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
    echo "REEL_ROOT=$(q "$root_path")"
    echo "REEL_PROJECT=$(q "$project")"
    echo "REEL_MODULES=$(q "$bed/kernel/lib/modules")"
    echo "REEL_CWD=$(q "$project")"
    echo "REEL_BINDS=$(q "$(printf '%s\n' "${binds[@]}")")"
} >"$dir/guest.conf"
# The command's extra environment, sourced by the guest before the script.
: >"$dir/env"
for e in "${envs[@]}"; do
    case "$e" in
        [A-Za-z_]*=*) echo "export ${e%%=*}=$(q "${e#*=}")" >>"$dir/env" ;;
        *) echo "run.sh: --env wants NAME=VALUE, got: $e" >&2; exit 2 ;;
    esac
done

if [ -z "$accel" ]; then
    accel=$(cat "$cache/accel" 2>/dev/null || echo tcg)
fi
case "$accel" in
    kvm) accel_args=(-accel kvm -cpu host) ;;
    tcg) accel_args=(-accel tcg,thread=multi -cpu max) ;;
    *) echo "run.sh: --accel must be kvm or tcg" >&2; exit 2 ;;
esac

# A free slot, so that parallel tests do not starve each other of the two cores.
slots=${REEL_VM_SLOTS:-2}
exec 8>/dev/null
while :; do
    got=""
    for ((i = 0; i < slots; i++)); do
        exec 8>"$cache/.slot$i.lock"
        if flock -n 8; then got=$i; break; fi
    done
    [ -n "$got" ] && break
    sleep 0.2
done

# QEMU's multi-threaded TCG occasionally aborts while the guest boots (seen:
# "iotlb_to_section: Assertion ... failed" in QEMU 10.0), or the guest's
# kernel stalls while booting (seen: RCU stalls, a vCPU whose timer never
# fires, on a loaded host); a crash or a stall before the command started is
# retried, a failure after it is reported. A boot takes seconds: one that
# has not reached the command in $boot_limit s is stopped.
boot_limit=$((timeout < 90 ? timeout : 90))
for attempt in 1 2 3; do
    set +e
    timeout --kill-after=5 "$timeout" qemu-system-x86_64 \
        "${accel_args[@]}" -smp 2 -m "${REEL_VM_MEMORY:-2048}" \
        -nodefaults -no-user-config -nographic -no-reboot \
        -serial "file:$dir/console.log" -monitor none \
        -kernel "$bed/vmlinuz" -initrd "$bed/initramfs.cpio.gz" \
        -append "console=ttyS0 loglevel=4 panic=-1 rdinit=/init tsc=reliable" \
        -fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap" \
        -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
        -fsdev "local,id=results,path=$dir,security_model=none" \
        -device virtio-9p-pci,fsdev=results,mount_tag=results \
        "${audio_args[@]}" \
        </dev/null >"$dir/qemu.log" 2>&1 &
    guest=$!
    (
        for ((waited = 0; waited < boot_limit; waited++)); do
            sleep 1
            grep -q "reel-guest: running" "$dir/console.log" 2>/dev/null && exit 0
            kill -0 "$guest" 2>/dev/null || exit 0
        done
        touch "$dir/boot-stalled"
        kill "$guest" 2>/dev/null
    ) &
    watcher=$!
    wait "$guest"
    status=$?
    kill "$watcher" 2>/dev/null
    wait "$watcher" 2>/dev/null
    set -e
    crashed_in_boot=0
    if [ "$status" -gt 128 ] && [ "$status" != 137 ] && [ ! -f "$dir/exit_code" ] \
        && ! grep -q "reel-guest: running" "$dir/console.log" 2>/dev/null; then
        crashed_in_boot=1
    fi
    if [ -f "$dir/boot-stalled" ] || { [ "$status" = 124 ] \
        && ! grep -q "reel-guest: running" "$dir/console.log" 2>/dev/null; }; then
        crashed_in_boot=1
    fi
    rm -f "$dir/boot-stalled"
    [ "$crashed_in_boot" = 1 ] && [ "$attempt" -lt 3 ] || break
    echo "run.sh: QEMU crashed or stalled while booting (status $status, attempt $attempt): $(tail -1 "$dir/console.log" 2>/dev/null)" >&2
    cp "$dir/qemu.log" "$dir/qemu-crash-$attempt.log"
    cp "$dir/console.log" "$dir/console-crash-$attempt.log" 2>/dev/null || true
    rm -rf "$dir/out" "$dir/stdout" "$dir/stderr"
done
exec 8>&-

if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    echo "run.sh: guest timed out after ${timeout}s; console log:" >&2
    cat "$dir/console.log" >&2 2>/dev/null
    exit 124
fi
if [ ! -f "$dir/exit_code" ]; then
    echo "run.sh: the guest did not run the command (qemu status $status); qemu said:" >&2
    cat "$dir/qemu.log" >&2 2>/dev/null
    echo "run.sh: console log:" >&2
    cat "$dir/console.log" >&2 2>/dev/null
    exit 1
fi
if [ -t 1 ] || [ -n "${REEL_VM_SHOW:-}" ]; then
    cat "$dir/stdout"
    cat "$dir/stderr" >&2
    echo "run.sh: exit code $(cat "$dir/exit_code"), results in $dir" >&2
fi
exit 0
