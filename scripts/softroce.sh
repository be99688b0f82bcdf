#!/usr/bin/env bash
# softroce.sh: set up SoftRoCE (rdma_rxe) on a host whose kernel has it.
set -euo pipefail

readonly PROG=${0##*/}
readonly DEV=rxe0

usage() {
  cat <<EOF
Usage: $PROG up [NETDEV] | status | down | -h

For hosts whose kernel ships rdma_rxe (a normal distribution kernel, CI runners).
  up [NETDEV]  modprobe rdma_rxe and 'rdma link add $DEV type rxe netdev NETDEV'
               (default NETDEV: the default route's interface, else lo). No error if
               $DEV already exists.
  status       'rdma link show' and a short 'ibv_devinfo' summary
  down         'rdma link delete $DEV' (fine if nothing is up)
Needs root for up/down, the 'rdma' tool (iproute2) and ibv_devinfo (ibverbs-utils,
with the rxe provider from ibverbs-providers): see install-deps.sh.

Ubuntu cloud kernels (-aws, -azure, -gcp, -kvm, ...) carry rdma_rxe in a separate
package: apt-get install linux-modules-extra-\$(uname -r)

On lo the MTU is 4096 and the RoCEv2 GID is index 1 (::ffff:127.0.0.1); on a
1500-byte netdev active_mtu is 1024.
If this kernel has no RDMA support (like the dev machines), it says so and exits 3:
use the qemu guest there instead (make vmexec; build/vmexec run -- CMD).
EOF
}

err() { printf '%s: %s\n' "$PROG" "$*" >&2; }

no_rdma() {
  err "this kernel ($(uname -r)) has no SoftRoCE support: $*"
  err "Ubuntu cloud kernels: apt-get install linux-modules-extra-\$(uname -r);"
  err "otherwise run the tests in the qemu guest: build/vmexec run -- CMD (make vmexec)"
  exit 3
}

require() {
  command -v "$1" >/dev/null || { err "$1 not found: install $2 (see scripts/install-deps.sh)"; exit 2; }
}

has_rxe_module() {
  [[ -d /sys/module/rdma_rxe ]] && return 0
  modinfo rdma_rxe >/dev/null 2>&1
}

link_exists() {
  [[ -e /sys/class/infiniband/$DEV ]] || rdma link show "$DEV/1" >/dev/null 2>&1
}

default_netdev() {
  local dev
  dev=$(ip -o route show default 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }')
  printf '%s\n' "${dev:-lo}"
}

cmd_up() {
  local netdev=${1:-}
  require rdma iproute2
  [[ $(id -u) -eq 0 ]] || { err "up needs root"; exit 2; }
  has_rxe_module || no_rdma "no rdma_rxe module (modinfo rdma_rxe failed)"
  if [[ ! -d /sys/module/rdma_rxe ]]; then
    modprobe rdma_rxe 2>/dev/null || no_rdma "modprobe rdma_rxe failed"
  fi
  if link_exists; then
    echo "$PROG: $DEV already exists:"
    rdma link show "$DEV/1" 2>/dev/null || true
    return 0
  fi
  [[ -n $netdev ]] || netdev=$(default_netdev)
  [[ -e /sys/class/net/$netdev ]] || { err "no such netdev: $netdev"; exit 2; }
  ip link set "$netdev" up 2>/dev/null || true
  rdma link add "$DEV" type rxe netdev "$netdev" || { err "rdma link add $DEV type rxe netdev $netdev failed"; exit 1; }
  echo "$PROG: $DEV up on $netdev"
  rdma link show "$DEV/1" 2>/dev/null || true
}

cmd_status() {
  require rdma iproute2
  if [[ ! -d /sys/class/infiniband ]] && ! has_rxe_module; then
    no_rdma "no /sys/class/infiniband and no rdma_rxe module"
  fi
  echo "== rdma link show"
  rdma link show || true
  echo "== ibv_devinfo"
  if command -v ibv_devinfo >/dev/null; then
    ibv_devinfo 2>&1 | grep -E 'hca_id|transport|port:|state|active_mtu|link_layer|No IB devices' || true
  else
    echo "ibv_devinfo not found (install ibverbs-utils)"
  fi
  link_exists || echo "$DEV: not configured (run: $PROG up)"
}

cmd_down() {
  require rdma iproute2
  [[ -d /sys/class/infiniband ]] || has_rxe_module || no_rdma "no rdma_rxe module"
  [[ $(id -u) -eq 0 ]] || { err "down needs root"; exit 2; }
  if ! link_exists; then
    echo "$PROG: $DEV not present, nothing to do"
    return 0
  fi
  rdma link delete "$DEV" || { err "rdma link delete $DEV failed"; exit 1; }
  echo "$PROG: $DEV removed"
}

case ${1:-} in
  up) shift; (($# <= 1)) || { usage >&2; exit 2; }; cmd_up "${1:-}" ;;
  status) cmd_status ;;
  down) cmd_down ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
