#!/usr/bin/env bash
# vm-mesh.sh: boot N SoftRoCE guests (as vm-pair.sh boots two) on one virtual
# Ethernet segment (qemu's multicast hub, kept on loopback), with an ssh server in
# each so that a launcher (mpiexec's ssh agent) can start processes in all of them,
# run one payload in each, and stream all outputs back.
# docs/testbed.md and docs/mesh.md describe the bed (three guests on one segment).
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
# shellcheck source=scripts/vm-lib.sh
. "$SCRIPT_DIR/vm-lib.sh"

usage() {
  cat <<EOF
Usage: $PROG [--guests N] [--bin FILE[:DEST]]... [--dir SRC[:DEST]]...
             [--file SRC[:DEST]]... [--env K=V]...
             [--outdir HOSTDIR] [--timeout SECS] [--grace SECS] [--mem MB] [--smp N]
             [--append ARGS] [--siw MODE] [--port PORT] [--logdir DIR] [--console]
             --run 'SCRIPT'

Boots N guests (default 3), each as scripts/vm-run.sh boots one, on one virtual
Ethernet segment (qemu '-netdev socket,mcast=230.0.0.1:PORT,localaddr=127.0.0.1'):
  guest i: host name meshI, eth0 $PAIR_NET.I/24, MTU 9000, rxe2 on eth0
           (GID 1 ::ffff:$PAIR_NET.I); /etc/hosts names every guest;
           dropbear (ssh) on $PAIR_NET.I:22, root logs in with a key made for this run;
           root's ssh client (OpenSSH, from the host) knows that key and asks no questions
then runs SCRIPT (sh text, in /work, 'ulimit -l unlimited') in every guest, with
RDMABENCH_MESH_INDEX=i, RDMABENCH_MESH_SIZE=N, RDMABENCH_MESH_HOSTS=mesh1,...,meshN.
Guests other than 1 find guest 1's flags with pair-wait (RDMABENCH_PEER is guest 1);
guest 1 raises them with pair-signal. 'mesh-wait-up [SECS]' waits until every guest's
ssh server is up (each guest raises flag 'up' once dropbear runs): a launcher in
guest 1 calls it first. Output lines come back behind 'gI: '.

Options:
  --guests N          number of guests, 2..9 (default 3)
  --run SCRIPT        the payload of every guest (required)
  --bin FILE[:DEST]   copy executable FILE into every guest's /bin (or to the absolute
                      path DEST) with its libraries
  --dir SRC[:DEST]    copy every file under directory SRC (symlinks followed) to DEST
                      (default SRC) in every guest, each with its libraries (plugins)
  --file SRC[:DEST]   copy a file or directory into every guest (as vm-run.sh)
  --env K=V           export K=V in every guest before the payload runs
  --outdir HOSTDIR    copy guest i's /out into HOSTDIR/gI
  --timeout SECS      give up after SECS seconds, boots included (default 900)
  --grace SECS        once a payload has failed, give the others SECS seconds (default 30)
  --mem MB            memory of each guest (default 1024)
  --smp N             CPUs of each guest (default 2)
  --append ARGS, --siw MODE, --logdir DIR, --console: as vm-pair.sh
  --port PORT         UDP port of the multicast hub (default: a random one)
  -h, --help          show this help

Exit status: 0 if every payload exits 0; else 124 if a guest timed out, 125 if a
guest failed (boot, panic, setup, lost output), else the first failed payload's
status; 2 on bad usage or a missing prerequisite on the host.
EOF
}

vm_multi=1 bins=() dirs=() files=() envs=() outdir='' timeout=900 mem=1024 smp=2 append_extra='' console=0
siw_opt=${RDMABENCH_SIW:-off} script='' have_run=0 grace=30 port='' logdir='' n=3
need_arg() { (($2 >= 2)) || die "$1 needs an argument (see -h)"; }
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift; set -- "$opt" "$val" "$@"; continue ;;
    --guests) need_arg "$1" $#; n=$2; shift 2 ;;
    --run) need_arg "$1" $#; script=$2 have_run=1; shift 2 ;;
    *) vm_guest_opt "$@" || { err "unknown argument: $1"; usage >&2; exit 2; }; shift "$vm_shift" ;;
  esac
done
((have_run)) || { err "--run SCRIPT is needed"; usage >&2; exit 2; }
[[ $n =~ ^[2-9]$ ]] || die "--guests must be 2..9, got: $n"
vm_check_guest_opts UDP
siw_mode=$(vm_siw_mode "$siw_opt")
vm_check_tools ssh ssh-keygen dropbear dropbearconvert
vm_load_kernel
vm_siw_check "$siw_mode"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-mesh.XXXXXX")
declare -A qpid=() ppid_=() qrc=() status=() tokens=() t_boot=() t_begin=() t_end=()
# shellcheck disable=SC2317 # invoked from the EXIT trap
cleanup() {
  set +e
  local g
  for g in "${!qpid[@]}"; do [[ -n ${qpid[$g]} ]] && kill "${qpid[$g]}" 2>/dev/null; done
  for g in "${!qpid[@]}"; do [[ -n ${qpid[$g]} ]] && wait "${qpid[$g]}" 2>/dev/null; done
  for g in "${!ppid_[@]}"; do
    [[ -n ${ppid_[$g]} ]] && { kill "${ppid_[$g]}" 2>/dev/null; wait "${ppid_[$g]}" 2>/dev/null; }
  done
  rm -rf "$tmp"
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
t_start=$(date +%s.%N)
since() { awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# --- ssh: one key pair for this run; dropbear wants its own key format --------------
mkdir -p "$tmp/ssh"
ssh-keygen -q -t ed25519 -N '' -C rdmabench-mesh -f "$tmp/ssh/id_ed25519"
cp "$tmp/ssh/id_ed25519.pub" "$tmp/ssh/authorized_keys"
cat >"$tmp/ssh/config" <<'EOF'
Host *
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
  IdentityFile /root/.ssh/id_ed25519
EOF
chmod 700 "$tmp/ssh"
chmod 600 "$tmp/ssh/"*
dropbearkey -t ed25519 -f "$tmp/dropbear_ed25519_host_key" >/dev/null 2>&1 || die "dropbearkey failed"
bins+=("$(command -v ssh)" "$(command -v dropbear)")
cat >"$tmp/mesh-wait-up" <<EOF
#!/bin/sh
# mesh-wait-up [SECS]: wait (default 300 s) until every guest's flag 'up' is raised.
end=\$(( \$(date +%s) + \${1:-300} ))
for i in \$(seq $n); do
  until timeout 5 wget -q -O /dev/null "http://$PAIR_NET.\$i:$PAIR_FLAG_PORT/up" 2>/dev/null; do
    [ "\$(date +%s)" -ge "\$end" ] && { echo "mesh-wait-up: guest \$i not up after \${1:-300} s" >&2; exit 1; }
    sleep 0.5
  done
done
EOF
chmod 755 "$tmp/mesh-wait-up"
files+=("$tmp/mesh-wait-up:/bin/mesh-wait-up")
files+=("$tmp/ssh:/root/.ssh" "$tmp/dropbear_ed25519_host_key:/etc/dropbear/dropbear_ed25519_host_key")

hosts='' names=''
for ((i = 1; i <= n; i++)); do
  hosts+="$PAIR_NET.$i mesh$i"$'\n'
  names+="${names:+,}mesh$i"
done

# --- initramfs: base + shared payload + one small archive per guest ------------------
vm_accel
vm_build_base
vm_stage_payload "$tmp/payload"
chmod 700 "$tmp/payload/root" "$tmp/payload/root/.ssh"
mkcpio "$tmp/payload" "$tmp/payload.cpio.gz" 1
rm -rf "$tmp/payload"
for ((i = 1; i <= n; i++)); do
  g=g$i pair_self=$i pair_name=$g pair_peer=$PAIR_NET.1
  token=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  tokens[$g]=$token
  init_extra="# vm-mesh.sh: names, and the ssh server a launcher's agent logs in through
hostname mesh$i
printf '%s' '$hosts' >>/etc/hosts
chmod 700 /root
dropbear -s -g -P /tmp/dropbear.pid -p $PAIR_NET.$i:22 -r /etc/dropbear/dropbear_ed25519_host_key || fail 'dropbear on $PAIR_NET.$i:22'
echo up >/tmp/pair-flags/up # ssh is up: see mesh-wait-up
export RDMABENCH_MESH_INDEX=$i RDMABENCH_MESH_SIZE=$n RDMABENCH_MESH_HOSTS=$names"
  run=$tmp/run-$g
  mkdir -p "$run/etc/rdmabench"
  vm_write_cmd "$run" -s 'tc() { /usr/sbin/tc "$@"; }'$'\n'"$script"
  vm_write_init "$run"
  mkcpio "$run" "$run.cpio.gz" 1
  cat "$base" "$tmp/payload.cpio.gz" "$run.cpio.gz" >"$tmp/initrd-$g.gz"
  rm -rf "$run" "$run.cpio.gz"
done
rm -f "$tmp/payload.cpio.gz"
append=$(vm_append)
err "initramfs ready after $(since) s"

# --- boot ----------------------------------------------------------------------------
[[ -n $port ]] || port=$(( 20000 + RANDOM % 40000 ))
start_guest() { # start_guest NAME MAC
  local g=$1 mac=$2 fifo=$tmp/$1.fifo
  mkfifo "$fifo"
  (
    set +e
    M="@@rdmabench-${tokens[$g]}"
    exec 7<"$fifo"
    vm_parse_console /dev/fd/7 "$tmp/$g.console" "$tmp/$g.out.b64" "$g: " "$tmp/$g.begin"
    declare -p state rc setupfail outstate >"$tmp/$g.result.tmp"
    mv "$tmp/$g.result.tmp" "$tmp/$g.result"
    cat <&7 >>"$tmp/$g.console"
  ) &
  ppid_[$g]=$!
  timeout -k 5 "$timeout" qemu-system-x86_64 \
    "${accel_args[@]}" -smp "$smp" -m "$mem" \
    -nographic -no-reboot -nic none \
    -netdev "socket,id=n0,mcast=230.0.0.1:$port,localaddr=127.0.0.1" \
    -device "virtio-net-pci,netdev=n0,mac=$mac,romfile=" \
    -kernel "$vmlinuz" -initrd "$tmp/initrd-$g.gz" -append "$append" \
    </dev/null >"$fifo" 2>"$tmp/$g.qemu.err" &
  qpid[$g]=$!
  t_boot[$g]=$(date +%s.%N)
}
guests=()
for ((i = 1; i <= n; i++)); do
  guests+=("g$i")
  start_guest "g$i" "$(printf '52:54:00:00:01:%02x' "$i")"
done
deadline=$(( $(date +%s) + timeout ))
err "$n guests started (hub: 230.0.0.1:$port on 127.0.0.1) after $(since) s"

# --- watch: until every console is done; stop the survivors of a failure -------------
declare -A done_=() stopped=()
failed_at=''
while :; do
  all=1
  for g in "${guests[@]}"; do
    [[ -n ${done_[$g]:-} ]] && continue
    all=0
    if [[ -z ${t_begin[$g]:-} && -e $tmp/$g.begin ]]; then
      t_begin[$g]=$(date +%s.%N)
      err "$g: booted, payload started after $(awk -v a="${t_boot[$g]}" -v b="${t_begin[$g]}" 'BEGIN { printf "%.1f", b - a }') s"
    fi
    if [[ -z ${t_end[$g]:-} && -e $tmp/$g.begin.end ]]; then
      t_end[$g]=$(date +%s.%N)
      [[ $(<"$tmp/$g.begin.end") == 0 ]] || failed_at=${failed_at:-$(date +%s)}
    fi
    if [[ -e $tmp/$g.result ]]; then
      done_[$g]=1
      # shellcheck disable=SC1090
      . "$tmp/$g.result"
      if [[ $state == finished || -n $setupfail ]]; then
        qrc[$g]=0
      else
        r=0; wait "${qpid[$g]}" || r=$?
        qrc[$g]=$r qpid[$g]=''
      fi
      [[ $state == finished && $rc == 0 ]] || failed_at=${failed_at:-$(date +%s)}
    fi
  done
  ((all)) && break
  now=$(date +%s)
  for g in "${guests[@]}"; do
    [[ -n ${done_[$g]:-} || -z ${qpid[$g]:-} ]] && continue
    if [[ -n $failed_at && -z ${stopped[$g]:-} ]] && ((now - failed_at >= grace)); then
      err "$g: stopping it: a guest failed ${grace} s ago"
      kill "${qpid[$g]}" 2>/dev/null || true
      stopped[$g]=1
    fi
    ((now > deadline + 15)) && kill "${qpid[$g]}" 2>/dev/null || true
  done
  sleep 0.3
done
for g in "${guests[@]}"; do
  [[ -n ${qpid[$g]:-} ]] && { kill "${qpid[$g]}" 2>/dev/null || true; wait "${qpid[$g]}" 2>/dev/null || true; qpid[$g]=''; }
done
for g in "${guests[@]}"; do wait "${ppid_[$g]}" 2>/dev/null || true; ppid_[$g]=''; done

# --- outcome -------------------------------------------------------------------------
summary=''
for g in "${guests[@]}"; do
  # shellcheck disable=SC1090
  . "$tmp/$g.result"
  s=0
  if [[ -n ${stopped[$g]:-} && -z $rc && -z $setupfail ]]; then
    err "$g: stopped ${grace} s after another guest failed"
    s=stopped
  else
    vm_outcome "$tmp/$g.console" "$tmp/$g.qemu.err" "${qrc[$g]}" "$timeout" \
      "${outdir:+$outdir/$g}" "$tmp/$g.out.b64" "$g" || s=$?
  fi
  status[$g]=$s
  [[ -z $logdir ]] || { mkdir -p "$logdir" && cp "$tmp/$g.console" "$logdir/$g.console"; }
  pay=''
  [[ -n ${t_begin[$g]:-} && -n ${t_end[$g]:-} ]] && pay=$(awk -v a="${t_begin[$g]}" -v b="${t_end[$g]}" 'BEGIN { printf ", payload %.1f s", b - a }')
  summary+="$g: exit $s$pay; "
done
err "${summary}wall $(since) s"
for s in 124 125; do
  for g in "${guests[@]}"; do [[ ${status[$g]} == "$s" ]] && exit "$s"; done
done
for g in "${guests[@]}"; do
  [[ ${status[$g]} == 0 || ${status[$g]} == stopped ]] || exit "${status[$g]}"
done
exit 0
