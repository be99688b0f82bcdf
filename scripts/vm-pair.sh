#!/usr/bin/env bash
# vm-pair.sh: boot two SoftRoCE guests (as vm-run.sh does) joined by a virtual
# Ethernet wire, run one payload in each, and stream both outputs back.
# docs/testbed.md describes the bed (two guests joined by a virtual wire).
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
# shellcheck source=scripts/vm-lib.sh
. "$SCRIPT_DIR/vm-lib.sh"

usage() {
  cat <<EOF
Usage: $PROG [--bin FILE]... [--file SRC[:DEST]]... [--env K=V]... [--outdir HOSTDIR]
             [--timeout SECS] [--mem MB] [--smp N] [--append ARGS] [--siw MODE]
             [--b-delay SECS] [--grace SECS] [--port PORT] [--logdir DIR] [--console]
             --a 'SCRIPT' --b 'SCRIPT'

Boots two guests, a and b, each as scripts/vm-run.sh boots one (Debian's kernel under
qemu, KVM or TCG as vm-run.sh -h says, rxe0 on lo, rxe1 on dummy0 with $CM_ADDR/24, siw1 on dummy1 with
$SIW_ADDR/24 as --siw says), joined by a virtual Ethernet wire (qemu
'-netdev socket' over a TCP connection on 127.0.0.1; a listens, b connects):
  guest a: eth0 $PAIR_NET.1/24, MTU 9000, rxe2 on eth0 (GID 1 ::ffff:$PAIR_NET.1)
  guest b: eth0 $PAIR_NET.2/24, MTU 9000, rxe2 on eth0 (GID 1 ::ffff:$PAIR_NET.2)
then runs SCRIPT (sh script text, run in /work with 'ulimit -l unlimited') in each.
Output lines come back behind 'a: ' and 'b: ' (payload output on stdout, kernel
messages on stderr).

Options:
  --a SCRIPT, --b SCRIPT  the payload of guest a and of guest b (both required;
                      'true' for none)
  --b-delay SECS      start b's payload SECS seconds after b has booted (default 0)
  --bin FILE          copy executable FILE into both guests' /bin with its libraries
  --dir SRC[:DEST]    copy every file under directory SRC (symlinks followed) to DEST
                      (default SRC) in both guests, each with its libraries (plugins)
  --file SRC[:DEST]   copy a file or directory into both guests (as vm-run.sh)
  --env K=V           export K=V in both guests before the payloads run
  --outdir HOSTDIR    copy each guest's /out into HOSTDIR/a and HOSTDIR/b
  --timeout SECS      give up after SECS seconds, both boots included (default 900)
  --grace SECS        once one payload has failed (or its guest died), give the other
                      SECS seconds to end before stopping it (default 30)
  --mem MB            memory of each guest (default 2048)
  --smp N             CPUs of each guest (default 2; with 1, a busy-polling benchmark
                      starves the guest's packet processing)
  --append ARGS       extra kernel command line arguments (both guests)
  --siw MODE          auto (the default here, or RDMABENCH_SIW), require or off: see
                      vm-run.sh -h
  --port PORT         TCP port on 127.0.0.1 for the wire (default: a free one)
  --logdir DIR        keep each guest's raw console in DIR/a.console, DIR/b.console
  --console           also copy the raw serial consoles to stderr (debugging)
  -h, --help          show this help

In each guest, besides what vm-run.sh -h lists:
  RDMABENCH_GUEST=a|b, RDMABENCH_ADDR=own eth0 address, RDMABENCH_PEER=the other's
  pair-signal NAME      raise flag NAME for the other guest
  pair-wait NAME [SECS] wait (default 120 s) until the other guest raised flag NAME
  wait-listen PORT [SECS]  wait until a local TCP port listens (no connection made)
  tc                    a function in the payload script running iproute2's
                        /usr/sbin/tc (busybox's sh would run its own tc applet, which
                        knows no netem); sch_netem is loaded, so e.g.
                        'tc qdisc add dev eth0 root netem loss 1%' works
A server/client pair, for instance:
  --a 'ib_send_lat -d rxe2 -x 1 -n 200 & wait-listen 18515 && pair-signal up; wait'
  --b 'pair-wait up && ib_send_lat -d rxe2 -x 1 -n 200 $PAIR_NET.1'

Exit status: 0 if both payloads exit 0; else 124 if a guest timed out, 125 if a guest
failed (boot, panic, setup, lost output), else the failed payload's status (a's
first; a guest stopped after --grace because the other failed does not count); 2 on
bad usage or a missing prerequisite on the host.
EOF
}

# --- arguments ------------------------------------------------------------------
vm_multi=1 bins=() dirs=() files=() envs=() outdir='' timeout=900 mem=2048 smp=2 append_extra='' console=0
siw_opt=${RDMABENCH_SIW:-auto} script_a='' script_b='' have_a=0 have_b=0 b_delay=0
grace=30 port='' logdir=''
need_arg() { (($2 >= 2)) || die "$1 needs an argument (see -h)"; }
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift; set -- "$opt" "$val" "$@"; continue ;;
    --a) need_arg "$1" $#; script_a=$2 have_a=1; shift 2 ;;
    --b) need_arg "$1" $#; script_b=$2 have_b=1; shift 2 ;;
    --b-delay) need_arg "$1" $#; b_delay=$2; shift 2 ;;
    *) vm_guest_opt "$@" || { err "unknown argument: $1"; usage >&2; exit 2; }; shift "$vm_shift" ;;
  esac
done
((have_a && have_b)) || { err "both --a and --b are needed ('true' for no payload)"; usage >&2; exit 2; }
vm_check_guest_opts TCP
[[ $b_delay =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--b-delay must be a number of seconds"
siw_mode=$(vm_siw_mode "$siw_opt")
vm_check_tools ss

# --- kernel ---------------------------------------------------------------------
vm_load_kernel
vm_siw_check "$siw_mode"

# --- temp dir and cleanup -------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-pair.XXXXXX")
declare -A qpid=() ppid_=() qrc=() status=()
# shellcheck disable=SC2317 # invoked from the EXIT trap
cleanup() {
  set +e
  local g
  for g in "${!qpid[@]}"; do
    [[ -n ${qpid[$g]} ]] && kill "${qpid[$g]}" 2>/dev/null
  done
  for g in "${!qpid[@]}"; do
    [[ -n ${qpid[$g]} ]] && wait "${qpid[$g]}" 2>/dev/null
  done
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
since() { # seconds since t_start, one decimal
  awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

# --- initramfs: base + shared payload + one small archive per guest ------------------
vm_accel
vm_build_base
vm_stage_payload "$tmp/payload"
mkcpio "$tmp/payload" "$tmp/payload.cpio.gz" 1
rm -rf "$tmp/payload"
declare -A tokens=()
for g in a b; do
  if [[ $g == a ]]; then pair_self=1 body=$script_a; else pair_self=2 body=$script_b; fi
  pair_name=$g
  token=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  tokens[$g]=$token
  run=$tmp/run-$g
  mkdir -p "$run/etc/rdmabench"
  pre='tc() { /usr/sbin/tc "$@"; } # iproute2 tc, not busybox applet'
  [[ $g == b && $b_delay != 0 ]] && pre+=$'\n'"sleep $b_delay"
  vm_write_cmd "$run" -s "$pre"$'\n'"$body"
  vm_write_init "$run"
  mkcpio "$run" "$run.cpio.gz" 1
  cat "$base" "$tmp/payload.cpio.gz" "$run.cpio.gz" >"$tmp/initrd-$g.gz"
  rm -rf "$run" "$run.cpio.gz"
done
rm -f "$tmp/payload.cpio.gz"
append=$(vm_append)
err "initramfs ready after $(since) s"

# --- boot ----------------------------------------------------------------------------
port_free() { [[ -z $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }
port_listening() { [[ -n $(ss -Hltn "src 127.0.0.1 and sport = :$1" 2>/dev/null) ]]; }

# start_guest NAME NETDEV MAC TIMEOUT: start qemu for NAME behind a console parser.
start_guest() {
  local g=$1 netdev=$2 mac=$3 tmo=$4
  local fifo=$tmp/$g.fifo
  rm -f "$fifo" "$tmp/$g.result" "$tmp/$g.begin" "$tmp/$g.begin.end"
  mkfifo "$fifo"
  (
    set +e # always leave a result behind
    M="@@rdmabench-${tokens[$g]}"
    exec 7<"$fifo" # kept open after the parser is done: qemu must never see EPIPE
    vm_parse_console /dev/fd/7 "$tmp/$g.console" "$tmp/$g.out.b64" "$g: " "$tmp/$g.begin"
    declare -p state rc setupfail outstate >"$tmp/$g.result.tmp"
    mv "$tmp/$g.result.tmp" "$tmp/$g.result"
    cat <&7 >>"$tmp/$g.console" # a finished guest lingers until vm-pair.sh stops it
  ) &
  ppid_[$g]=$!
  timeout -k 5 "$tmo" qemu-system-x86_64 \
    "${accel_args[@]}" -smp "$smp" -m "$mem" \
    -nographic -no-reboot -nic none \
    -netdev "socket,id=n0,$netdev" -device "virtio-net-pci,netdev=n0,mac=$mac,romfile=" \
    -kernel "$vmlinuz" -initrd "$tmp/initrd-$g.gz" -append "$append" \
    </dev/null >"$fifo" 2>"$tmp/$g.qemu.err" &
  qpid[$g]=$!
  t_boot[$g]=$(date +%s.%N)
}

declare -A t_boot=() t_begin=() t_end=()
deadline=$(( $(date +%s) + timeout ))
tries=0
while :; do
  tries=$((tries + 1))
  if [[ -z $port ]] || ((tries > 1)); then
    for _ in $(seq 50); do
      port=$(( 20000 + RANDOM % 40000 ))
      port_free "$port" && break
    done
  fi
  start_guest a "listen=127.0.0.1:$port" 52:54:00:00:00:01 "$timeout"
  ok=0
  for _ in $(seq 200); do
    port_listening "$port" && { ok=1; break; }
    kill -0 "${qpid[a]}" 2>/dev/null || break
    sleep 0.05
  done
  ((ok)) && break
  kill "${qpid[a]}" 2>/dev/null || true
  wait "${qpid[a]}" 2>/dev/null || true
  wait "${ppid_[a]}" 2>/dev/null || true
  qpid[a]='' ppid_[a]=''
  if ((tries >= 5)) || ! grep -qi 'in use' "$tmp/a.qemu.err" 2>/dev/null; then
    cat "$tmp/a.qemu.err" >&2 2>/dev/null || true
    err "error: guest a's qemu did not listen on 127.0.0.1:$port"
    exit 125
  fi
done
start_guest b "connect=127.0.0.1:$port" 52:54:00:00:00:02 "$(( deadline - $(date +%s) + 1 ))"
err "guests started (wire: 127.0.0.1:$port) after $(since) s"

# --- watch: until both consoles are done; stop the survivor of a failure -----------
declare -A done_=() failed_at=() stopped=()
ended() { [[ -n ${done_[$1]:-} ]]; }
while :; do
  for g in a b; do
    ended "$g" && continue
    if [[ -z ${t_begin[$g]:-} && -e $tmp/$g.begin ]]; then
      t_begin[$g]=$(date +%s.%N)
      err "$g: booted, payload started after $(awk -v a="${t_boot[$g]}" -v b="${t_begin[$g]}" 'BEGIN { printf "%.1f", b - a }') s"
    fi
    if [[ -z ${t_end[$g]:-} && -e $tmp/$g.begin.end ]]; then
      t_end[$g]=$(date +%s.%N)
      e=$(<"$tmp/$g.begin.end")
      [[ $e == 0 ]] || failed_at[$g]=${failed_at[$g]:-$(date +%s)}
    fi
    if [[ -e $tmp/$g.result ]]; then
      done_[$g]=1
      # shellcheck disable=SC1090
      . "$tmp/$g.result"
      if [[ $state == finished || -n $setupfail ]]; then
        qrc[$g]=0 # a finished guest stays up (serving its flags) until both are done
      else
        r=0; wait "${qpid[$g]}" || r=$?
        qrc[$g]=$r
        qpid[$g]=''
      fi
      [[ $state == finished && $rc == 0 ]] || failed_at[$g]=${failed_at[$g]:-$(date +%s)}
    fi
  done
  if ended a && ended b; then
    for g in a b; do
      [[ -n ${qpid[$g]} ]] || continue
      kill "${qpid[$g]}" 2>/dev/null || true
      wait "${qpid[$g]}" 2>/dev/null || true
      qpid[$g]=''
    done
    for g in a b; do
      wait "${ppid_[$g]}" 2>/dev/null || true
      ppid_[$g]=''
    done
    break
  fi
  now=$(date +%s)
  for g in a b; do
    o=$([[ $g == a ]] && echo b || echo a)
    if ! ended "$g" && [[ -n ${failed_at[$o]:-} && -z ${stopped[$g]:-} && -n ${qpid[$g]:-} ]] \
       && ((now - failed_at[$o] >= grace)); then
      err "$g: stopping it: $o failed ${grace} s ago"
      kill "${qpid[$g]}" 2>/dev/null || true
      stopped[$g]=1
    fi
    if ! ended "$g" && ((now > deadline + 15)) && [[ -n ${qpid[$g]:-} ]]; then
      kill "${qpid[$g]}" 2>/dev/null || true # timeout(1) should have done it already
    fi
  done
  sleep 0.3
done

# --- outcome -------------------------------------------------------------------------
for g in a b; do
  # shellcheck disable=SC1090
  . "$tmp/$g.result"
  s=0
  if [[ -n ${stopped[$g]:-} && -z $rc && -z $setupfail ]]; then
    # Not a failure of its own: the other guest's failure decides the exit status.
    err "$g: stopped ${grace} s after the other guest failed (payload $([[ $state == boot ]] && echo 'not started' || echo 'still running'))"
    s=stopped
  else
    vm_outcome "$tmp/$g.console" "$tmp/$g.qemu.err" "${qrc[$g]}" "$timeout" \
      "${outdir:+$outdir/$g}" "$tmp/$g.out.b64" "$g" || s=$?
  fi
  status[$g]=$s
  if [[ -n $logdir ]]; then
    mkdir -p "$logdir" && cp "$tmp/$g.console" "$logdir/$g.console"
  fi
done
summary=''
for g in a b; do
  pay=''
  if [[ -n ${t_begin[$g]:-} && -n ${t_end[$g]:-} ]]; then
    pay=$(awk -v a="${t_begin[$g]}" -v b="${t_end[$g]}" 'BEGIN { printf ", payload %.1f s", b - a }')
  fi
  boot=''
  [[ -n ${t_begin[$g]:-} ]] && boot=$(awk -v a="${t_boot[$g]}" -v b="${t_begin[$g]}" 'BEGIN { printf ", boot %.1f s", b - a }')
  summary+="$g: exit ${status[$g]}$boot$pay; "
done
err "${summary}wall $(since) s"
for s in 124 125; do
  [[ ${status[a]} == "$s" || ${status[b]} == "$s" ]] && exit "$s"
done
for g in a b; do
  [[ ${status[$g]} == 0 || ${status[$g]} == stopped ]] || exit "${status[$g]}"
done
exit 0
