#!/usr/bin/env bash
# vm-run.sh: boot Debian's kernel under qemu (KVM where it works, else TCG) with SoftRoCE (rdma_rxe on lo)
# from an initramfs, run one command in it, and stream its output back.
# docs/testbed.md describes the recipe this follows.
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
# shellcheck source=scripts/vm-lib.sh
. "$SCRIPT_DIR/vm-lib.sh"

usage() {
  cat <<EOF
Usage: $PROG [--bin FILE]... [--file SRC[:DEST]]... [--env K=V]... [--outdir HOSTDIR]
             [--timeout SECS] [--mem MB] [--smp N] [--numa N] [--append ARGS] [--siw MODE]
             [--console] -- CMD [ARGS...]

Boots Debian's kernel (from \${RDMABENCH_CACHE:-/var/cache/rdmabench}, see install-deps.sh)
in qemu (-accel kvm -cpu max when /dev/kvm works, else -accel tcg -cpu max: see
Accelerator below), loads rdma_rxe, runs 'rdma link add rxe0 type rxe
netdev lo' (and rxe1 on a dummy0 with $CM_ADDR/24 for rdma_cm, which cannot
use loopback addresses), then runs CMD in /work with 'ulimit -l unlimited'. CMD's stdout and stderr
stream to this script's stdout; the exit status is CMD's.

Options:
  --bin FILE          copy executable FILE into the guest's /bin with the libraries ldd lists
  --dir SRC[:DEST]    copy every file under directory SRC (symlinks followed) to DEST
                      (default SRC) in the guest, each with its libraries (plugins)
  --file SRC[:DEST]   copy a file or directory into the guest (default DEST /work/BASENAME;
                      a relative DEST is taken relative to /work; DEST/ puts SRC inside DEST)
  --env K=V           export K=V in the guest before CMD runs
  --outdir HOSTDIR    after CMD ends, copy the guest's /out into HOSTDIR (tar+gzip+base64
                      over the serial console)
  --timeout SECS      give up after SECS seconds, boot included (default 600)
  --mem MB            guest memory (default 2048)
  --smp N             guest CPUs (default 2)
  --numa N            boot with N NUMA nodes (qemu -numa): the memory split evenly, the CPUs
                      dealt out in blocks (--numa 2 --smp 2: CPU 0 on node 0, CPU 1 on node 1);
                      default 1 (no NUMA)
  --append ARGS       extra kernel command line arguments
  --siw MODE          soft-iWARP beside rxe: 'auto' adds siw1 on dummy1 ($SIW_ADDR/24,
                      MTU 9000) when siw.ko was built (install-deps.sh), else says so and
                      goes on with rxe only; 'require' fails (exit 2 on the host, 125 in
                      the guest) without it; 'off' (the default) leaves it out. The
                      default comes from RDMABENCH_SIW if set. In the guest,
                      RDMABENCH_SIW_DEVICE=siw1 is exported when siw1 is up.
  --console           also copy the raw serial console to stderr (debugging)
  -h, --help          show this help

Always in the guest: busybox applets, rdma, ibv_devinfo, ibv_devices, ibv_*_pingpong,
rping, perftest's ib_{send,write,read,atomic}_{lat,bw}, libibverbs + librdmacm + the rxe
provider, iproute2's tc (/usr/sbin/tc, which knows netem: 'insmod
/lib/modules/\$(uname -r)/sch_netem.ko' first), and wait-listen PORT [SECS] (waits
until a local TCP port listens, without connecting to it). /tmp is tmpfs, /out exists, PATH=/bin:/sbin:/usr/bin:/usr/sbin. On lo, use
GID index 1 (::ffff:127.0.0.1), e.g. 'ib_send_lat -d rxe0 -x 1'. Kernel console messages
('[ 12.345678] ...') seen while CMD runs go to stderr. /out travels at about 0.4 MB/s.

Accelerator: KVM when /dev/kvm opens read-write and a probe boot of the guest kernel
under -accel kvm reaches its /init within RDMABENCH_KVM_PROBE_TIMEOUT seconds (default
20), else TCG; the choice and the reason for TCG go to stderr ("$PROG: accelerator: TCG
(no /dev/kvm)"). A probe that booted or stalled is cached for a day in
\${RDMABENCH_CACHE}/accel (else ~/.cache/rdmabench/accel); a qemu that fails at once
under KVM (such as the abort "kvm_buf_set_msrs: Assertion ... failed") costs under a
second and is probed again each time. RDMABENCH_ACCEL=tcg forces TCG,
RDMABENCH_ACCEL=kvm fails (exit 2) without KVM.

Exit status: CMD's; 124 on timeout; 125 if the guest failed (boot, panic, rxe setup,
lost output); 2 on bad usage or a missing prerequisite on the host.
EOF
}

# --- arguments ------------------------------------------------------------------
bins=() dirs=() files=() envs=() outdir='' timeout=600 mem=2048 smp=2 numa=1 append_extra='' console=0
siw_opt=${RDMABENCH_SIW:-off}
need_arg() { (($2 >= 2)) || die "$1 needs an argument (see -h)"; }
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift; set -- "$opt" "$val" "$@"; continue ;;
    --numa) need_arg "$1" $#; numa=$2; shift 2 ;;
    -*) vm_guest_opt "$@" || { err "unknown option: $1"; usage >&2; exit 2; }; shift "$vm_shift" ;;
    *) break ;;
  esac
done
(($#)) || { err "no command given"; usage >&2; exit 2; }
vm_check_guest_opts
[[ $numa =~ ^[1-9][0-9]*$ ]] || die "--numa must be a positive integer"
mapfile -t numa_args < <(vm_numa_args "$numa" "$smp" "$mem") || exit 2
((numa < 2 || ${#numa_args[@]} > 0)) || exit 2
for kv in "${envs[@]}"; do
  [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants K=V with K a shell name, got: $kv"
done

siw_mode=$(vm_siw_mode "$siw_opt")
vm_check_tools

# --- kernel ---------------------------------------------------------------------
vm_load_kernel
vm_siw_check "$siw_mode"

# --- temp dir and cleanup -------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
qpid=''
# shellcheck disable=SC2317 # invoked from the EXIT trap
cleanup() {
  if [[ -n $qpid ]] && kill -0 "$qpid" 2>/dev/null; then
    kill "$qpid" 2>/dev/null || true
    wait "$qpid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- initramfs: the cached base and this run's archive -------------------------------
vm_accel
vm_build_base
token=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
pair_self=''
vm_stage_payload "$tmp/run"
vm_write_cmd "$tmp/run" "$@"
vm_write_init "$tmp/run"
vm_initrd "$tmp/run" "$tmp/initrd.gz"

# --- boot and parse the console -------------------------------------------------------
M="@@rdmabench-$token"
fifo=$tmp/console.fifo
mkfifo "$fifo"
timeout -k 5 "$timeout" qemu-system-x86_64 \
  "${accel_args[@]}" -smp "$smp" -m "$mem" "${numa_args[@]}" \
  -nographic -no-reboot -nic none \
  -kernel "$vmlinuz" -initrd "$tmp/initrd.gz" -append "$(vm_append)" \
  </dev/null >"$fifo" 2>"$tmp/qemu.err" &
qpid=$!

vm_parse_console "$fifo" "$tmp/console.log" "$tmp/out.b64" ''

# Stop the guest (it powers itself off, but there is no need to wait for it).
qrc=0
if [[ $state == finished || -n $setupfail ]]; then
  kill "$qpid" 2>/dev/null || true
  wait "$qpid" 2>/dev/null || true
else
  wait "$qpid" || qrc=$?
fi
qpid=''

status=0
vm_outcome "$tmp/console.log" "$tmp/qemu.err" "$qrc" "$timeout" "$outdir" "$tmp/out.b64" || status=$?
exit "$status"
