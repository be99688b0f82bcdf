#!/usr/bin/env bash
# vm-smoke.sh: boot the SoftRoCE guest and check that rxe0 is up with a 4096 MTU.
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  cat <<EOF
Usage: ${0##*/} [vm-run.sh options]

Runs 'ibv_devinfo -d rxe0 -v' (the port part) and 'rdma link show' in the qemu
guest via scripts/vm-run.sh and checks the output for hca_id rxe0, port state
PORT_ACTIVE, active_mtu 4096 (rxe on lo) and the rdma link line.
('ibv_devinfo -v | head -40' is not enough: it stops before the port section, and
PORT_ACTIVE would match the PORT_ACTIVE_EVENT capability flag.)
Exits 0 on success, non-zero otherwise.
EOF
  exit 0
fi

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rc=0
out=$("$dir/vm-run.sh" "$@" -- sh -c \
  'ibv_devinfo -d rxe0 -v | grep -E "hca_id|port:|state:|_mtu:|link_layer|GID\\["; rdma link show') \
  || rc=$?
printf '%s\n' "$out"
((rc == 0)) || { echo "vm-smoke: FAIL: vm-run.sh exited $rc" >&2; exit "$rc"; }
missing=()
checks=(
  'hca_id:[[:space:]]+rxe0'
  'state:[[:space:]]+PORT_ACTIVE'
  'active_mtu:[[:space:]]+4096'
  'link rxe0/1 state ACTIVE'
)
for want in "${checks[@]}"; do
  grep -qE -- "$want" <<<"$out" || missing+=("$want")
done
if ((${#missing[@]})); then
  echo "vm-smoke: FAIL: output lacks: ${missing[*]}" >&2
  exit 1
fi
echo "vm-smoke: OK (rxe0 PORT_ACTIVE, MTU 4096)"
