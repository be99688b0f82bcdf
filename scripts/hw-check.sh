#!/bin/sh
# hw-check.sh: rdmabench's hardware check (docs/hardware.md). On every ACTIVE port of
# every RDMA device of this host it runs rdmabench's loopback latency and bandwidth,
# and perftest's same tests beside it where perftest is installed, then writes one
# report file (.tar.gz) to send back. Needs only rdma-core, rdmabench and a POSIX sh
# (bash, dash, busybox sh) with awk, sed, tar, gzip and timeout; perftest is optional.
# It reads rdmabench's JSON through rdmabench itself ('devices --tsv FILE', 'report
# --tsv FILE') and perftest's output through 'rdmabench import perftest'.
# Installed by the packages as /usr/bin/rdmabench-hw-check; 'make hw-check' runs it
# from a checkout. scripts/scripttest (Go) tests it on a host without RDMA,
# internal/e2e (TestHWCheck) on rxe and siw.
set -u

PROG=${0##*/}

usage() {
  cat <<EOF
Usage: $PROG [options]

rdmabench's hardware check: on every ACTIVE port of every RDMA device it runs
'rdmabench loopback' latency (p50) and bandwidth, one test per run, and, where
perftest's ib_*_lat and ib_*_bw are on PATH, the same tests with perftest
(client and server on this host), the two tools' runs alternating
(rdmabench perftest perftest rdmabench ...), 3 of each: it reports
the medians and their ratios, rdmabench/perftest. Down ports are skipped and
named; iWARP ports run over rdma_cm (--rdma-cm, perftest -R) on the port's IP
address. Every run has a timeout. Then it writes one report, a .tar.gz with
host and device information, every run's JSON and output, and a summary.

Options:
  -o, --outdir DIR     where the report goes (default: the current directory)
  -b, --bin FILE       the rdmabench binary (default: \$RDMABENCH_BIN, else
                       rdmabench beside this script, ../build/rdmabench, PATH)
  -d, --devices LIST   only these devices, e.g. mlx5_0,mlx5_1 (default: all)
      --ops LIST       operations (default: $D_OPS)
      --modes LIST     lat, bw or both (default: $D_MODES)
      --lat-sizes LIST latency message sizes, bytes (default: $D_LAT_SIZES)
      --bw-sizes LIST  bandwidth message sizes, bytes (default: $D_BW_SIZES)
      --lat-iters N    latency iterations per run (default: $D_LAT_ITERS)
      --bw-iters N     bandwidth iterations per run (default: $D_BW_ITERS)
  -n, --iters N        both of the above
      --tx-depth N     bandwidth tx depth, both tools (default: $D_TX_DEPTH)
      --cq-mod N       bandwidth CQ moderation, both tools (default: $D_CQ_MOD)
      --reps N         runs per tool and test (default: $D_REPS; fewer than 3: a quick
                       check, no median worth the name)
      --no-perftest    rdmabench only, even where perftest is installed
      --timeout SECS   the limit of each run, server and client (default: $D_TIMEOUT)
      --tcp-port N     first TCP (or rdma_cm) port for perftest's pairs (default: $D_TCP_PORT)
      --keep           keep the report's directory beside the .tar.gz
      --expect-bw X    then judge the ports with 'rdmabench accept' (docs/node-bringup.md):
                       bandwidth at least X, PCT% of the port's rate or a rate (375Gb/s)
      --expect-lat X   likewise, WRITE's and SEND's latency at most X (p50=2.5us)
  -h, --help           show this help

Exit status: 0 every run completed (whatever the ratios); 1 some run failed
(the report names it, with its output); 2 bad usage; 3 nothing could be
checked: no rdmabench, no RDMA device or no ACTIVE port (once rdmabench is
found, the report is still written, with the host information); with
--expect-*, when every run completed, accept's: 11 a NIC failed, 12 one
could not be told.
EOF
}

D_OPS=send,write,read D_MODES=lat,bw D_LAT_SIZES=2,64,4096 D_BW_SIZES=4096,65536,1048576
D_LAT_ITERS=10000 D_BW_ITERS=5000 D_TX_DEPTH=128 D_CQ_MOD=100 D_REPS=3 D_TIMEOUT=120 D_TCP_PORT=18700

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { say "error: $1"; exit "${2:-2}"; }

# uptime_cs: seconds since boot in hundredths, for run times (0 without /proc/uptime)
uptime_cs() {
  up=0.00
  read -r up _ </proc/uptime 2>/dev/null
  case $up in *.[0-9][0-9]) echo $((${up%.*} * 100 + 1${up#*.} - 100)) ;; *) echo 0 ;; esac
}

# rb_tsv FILE KEY...: the first result's values in FILE (an rdmabench result document,
# read by rdmabench itself: 'report --tsv', whose columns are file op mode size_bytes
# iterations p50_ns p99_ns mib_per_s mpps device port gid_index transport
# rdma_core_version kernel_clocksource, the KEYs file op mode size iters p50 p99 mib
# mpps dev port gid tr rc cs), on one line, "-" for each that is empty or absent
rb_tsv() {
  f=$1; shift
  "$bin" report --tsv "$f" 2>/dev/null | sed -n 2p | tr '\t' '|' | {
    IFS='|' read -r c_file c_op c_mode c_size c_iters c_p50 c_p99 c_mib c_mpps c_dev c_port c_gid c_tr c_rc c_cs || :
    line=''
    for k in "$@"; do
      eval "v=\${c_$k:-}"
      line="$line${line:+ }${v:--}"
    done
    echo "$line"
  }
}
# --jget BIN FILE KEY... (for scripts/scripttest): the values of a result file as
# this script reads them, through the rdmabench BIN
if [ "${1:-}" = --jget ]; then
  [ $# -ge 4 ] && [ -x "$2" ] && [ -r "$3" ] || die "--jget needs an rdmabench BIN, a readable FILE and a KEY"
  bin=$2
  shift 2
  rb_tsv "$@"
  exit 0
fi
# isnum V: V is a number (at least one digit: "-", rb_tsv's absent value, is not)
isnum() { case $1 in '' | *[!0-9.eE+-]* | *.*.*) return 1 ;; *[0-9]*) return 0 ;; esac; return 1; }

# perftest's output is read by rdmabench's one parser (rdmabench import perftest,
# bench/perftest/parse.go): pt_col FILE KEY is the first result row's figure in
# column KEY (t_typical, bw_avg, ...), "" when the file has none
pt_col() { "$bin" import perftest --show "column:$2" "$1" 2>/dev/null; }

outdir=. bin='' devs='' ops=$D_OPS modes=$D_MODES lat_sizes=$D_LAT_SIZES bw_sizes=$D_BW_SIZES
lat_iters=$D_LAT_ITERS bw_iters=$D_BW_ITERS tx_depth=$D_TX_DEPTH cq_mod=$D_CQ_MOD reps=$D_REPS
use_pt=1 run_to=$D_TIMEOUT tcp_port=$D_TCP_PORT keep=0 exp_bw='' exp_lat=''
need() { [ "$2" -ge 2 ] || die "$1 needs an argument (see --help)"; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --*=*) o=${1%%=*} v=${1#*=}; shift; set -- "$o" "$v" "$@"; continue ;;
    -o|--outdir) need "$1" $#; outdir=$2; shift 2 ;;
    -b|--bin) need "$1" $#; bin=$2; shift 2 ;;
    -d|--devices) need "$1" $#; devs=$2; shift 2 ;;
    --ops) need "$1" $#; ops=$2; shift 2 ;;
    --modes) need "$1" $#; modes=$2; shift 2 ;;
    --lat-sizes) need "$1" $#; lat_sizes=$2; shift 2 ;;
    --bw-sizes) need "$1" $#; bw_sizes=$2; shift 2 ;;
    --lat-iters) need "$1" $#; lat_iters=$2; shift 2 ;;
    --bw-iters) need "$1" $#; bw_iters=$2; shift 2 ;;
    -n|--iters) need "$1" $#; lat_iters=$2 bw_iters=$2; shift 2 ;;
    --tx-depth) need "$1" $#; tx_depth=$2; shift 2 ;;
    --cq-mod) need "$1" $#; cq_mod=$2; shift 2 ;;
    --reps) need "$1" $#; reps=$2; shift 2 ;;
    --no-perftest) use_pt=0; shift ;;
    --timeout) need "$1" $#; run_to=$2; shift 2 ;;
    --tcp-port) need "$1" $#; tcp_port=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --expect-bw) need "$1" $#; exp_bw=$2; shift 2 ;;
    --expect-lat) need "$1" $#; exp_lat=$2; shift 2 ;;
    *) say "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
done

# posint NAME VALUE [MAX]: VALUE is a whole number from 1 to MAX
posint() {
  case $2 in '' | *[!0-9]* | 0*) die "$1 must be a positive whole number, got '$2'" ;; esac
  [ $# -lt 3 ] || [ "$2" -le "$3" ] || die "$1 must be at most $3, got $2"
}
# list NAME VALUE ALLOWED...: a comma-separated list of ALLOWED words
list() {
  n=$1 v=$2; shift 2
  [ -n "$v" ] || die "$n must not be empty"
  for w in $(echo "$v" | tr ',' ' '); do
    ok=0
    for a in "$@"; do [ "$w" = "$a" ] && ok=1; done
    [ $ok = 1 ] || die "$n: '$w' is not one of: $*"
  done
}
sizes() { for s in $(echo "$2" | tr ',' ' '); do posint "$1 ($s)" "$s" 1073741824; done; }
list --ops "$ops" send write read
list --modes "$modes" lat bw
sizes --lat-sizes "$lat_sizes"
sizes --bw-sizes "$bw_sizes"
posint --lat-iters "$lat_iters" 100000000
posint --bw-iters "$bw_iters" 100000000
posint --tx-depth "$tx_depth" 65536
posint --cq-mod "$cq_mod" 65536
posint --reps "$reps" 100
[ "$reps" -ge 3 ] || say "note: --reps $reps: fewer than 3 runs per tool make no median worth the name (a quick check)"
posint --timeout "$run_to" 86400
posint --tcp-port "$tcp_port" 64000
[ -d "$outdir" ] && [ -w "$outdir" ] || die "--outdir $outdir: not a writable directory"
for t in awk sed tar gzip timeout; do
  command -v $t >/dev/null 2>&1 || die "needs $t(1), which is not on PATH" 3
done

# --- the rdmabench binary ----------------------------------------------------------
here=$(cd "$(dirname "$0")" 2>/dev/null && pwd)
if [ -z "$bin" ]; then
  for c in "${RDMABENCH_BIN:-}" "$here/rdmabench" "$here/../build/rdmabench" "$(command -v rdmabench 2>/dev/null)"; do
    [ -n "$c" ] && [ -x "$c" ] && [ ! -d "$c" ] && { bin=$c; break; }
  done
  [ -n "$bin" ] || die "no rdmabench: give --bin FILE (or build it: make build)" 3
fi
[ -x "$bin" ] && [ ! -d "$bin" ] || die "--bin $bin: not an executable file" 3
case $bin in /*) ;; *) bin=$(cd "$(dirname "$bin")" && pwd)/${bin##*/} ;; esac

# --- the report's directory --------------------------------------------------------
stamp=$(date -u +%Y%m%dT%H%M%SZ)
name=rdmabench-hw-check-$stamp
outdir=$(cd "$outdir" && pwd)
i=1
while [ -e "$outdir/$name" ] || [ -e "$outdir/$name.tar.gz" ]; do i=$((i + 1)) name=rdmabench-hw-check-$stamp-$i; done
R=$outdir/$name
mkdir "$R" && mkdir "$R/runs" || die "cannot create $R" 3
: >"$R/results.tsv"
: >"$R/failures.txt"
: >"$R/skipped.txt"
echo "$0 $*" >"$R/command.txt"

# --- host information ---------------------------------------------------------------
H=$R/host.txt
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel: $(uname -srvm 2>/dev/null)"
  [ -r /etc/os-release ] && echo "os: $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
  echo "cpu: $(sed -n 's/^model name[ 	]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1) x $(grep -c '^processor' /proc/cpuinfo 2>/dev/null)"
  echo "rdmabench: $("$bin" --version 2>&1 | head -n 1)"
  echo "rdmabench binary: $bin"
  v=''
  command -v dpkg-query >/dev/null 2>&1 && v=$(dpkg-query -W -f '${Version}' rdma-core 2>/dev/null)
  [ -z "$v" ] && command -v rpm >/dev/null 2>&1 && v=$(rpm -q --qf '%{VERSION}-%{RELEASE}' rdma-core 2>/dev/null)
  [ -z "$v" ] && v=$(ls /usr/lib*/libibverbs.so.1.* /usr/lib*/*/libibverbs.so.1.* /lib*/*/libibverbs.so.1.* 2>/dev/null |
    sed -n 's/.*libibverbs\.so\.1\.[0-9]*\.//p' | head -n 1)
  echo "rdma-core: ${v:-unknown}"
  echo "shell: $(readlink /proc/$$/exe 2>/dev/null || echo "$SHELL")"
  if command -v lsmod >/dev/null 2>&1; then
    echo "rdma modules: $(lsmod 2>/dev/null | awk 'NR > 1 && $1 ~ /^(ib_|rdma|mlx|bnxt|irdma|i40iw|cxgb|qedr|efa|siw|hfi|erdma|mana_ib|ionic|hns|vmw_pvrdma|ocrdma|iw_)/ { printf "%s ", $1 }')"
  fi
} >"$H" 2>&1
# the PCI network and InfiniBand adapters, for a host where no RDMA device shows up
command -v lspci >/dev/null 2>&1 && lspci -nn 2>/dev/null | grep -iE 'ethernet|infiniband|network|fabric' >"$R/adapters.txt"

# --- perftest ------------------------------------------------------------------------
pt_why='' pt_ver=''
if [ $use_pt = 0 ]; then
  pt_why='not run (--no-perftest)'
else
  for o in $(echo "$ops" | tr ',' ' '); do
    for m in $(echo "$modes" | tr ',' ' '); do
      p=$(command -v ib_${o}_$m 2>/dev/null)
      if [ -z "$p" ]; then
        pt_why="not installed (no ib_${o}_$m on PATH; Debian/Ubuntu: apt install perftest; Fedora/RHEL: dnf install perftest)"
      elif [ "$(readlink -f "$p" 2>/dev/null)" = "$(readlink -f "$bin" 2>/dev/null)" ]; then
        pt_why="not perftest: ib_${o}_$m on PATH ($p) is rdmabench's drop-in link"
      fi
    done
  done
  if [ -z "$pt_why" ]; then
    o=${ops%%,*} m=${modes%%,*}
    pt_ver=$(ib_${o}_$m --version 2>&1 | sed -n 's/^ *Version: *//p' | head -n 1)
    pt_ver=${pt_ver:-unknown version}
  fi
fi
[ -n "$pt_why" ] && use_pt=0
echo "perftest: ${pt_ver:-$pt_why}" >>"$H"

# --- devices and ports ---------------------------------------------------------------
# ports.txt: one line per port, fields split by '|':
# device|port|state|transport|link_layer|driver|firmware|speed|width|active_mtu|netdev|ipv4
P=$R/ports.txt
enum_rc=0
"$bin" devices --json >"$R/devices.json" 2>"$R/devices.err" || enum_rc=$?
if [ $enum_rc = 0 ]; then
  # rdmabench reads its own JSON: 'devices --tsv FILE', one line per port after a header
  "$bin" devices --tsv "$R/devices.json" 2>>"$R/devices.err" | sed 1d | tr '\t' '|' >"$P"
  enum_how="rdmabench devices --json"
else
  # rdmabench could not list the devices: read sysfs instead (no addresses, so no iWARP)
  : >"$P"
  for d in /sys/class/infiniband/*; do
    [ -d "$d/ports" ] || continue
    tr=RoCE
    case $(cat "$d/node_type" 2>/dev/null) in 4:*) tr=iWARP ;; esac
    for p in "$d"/ports/*; do
      st=$(sed 's/^[0-9]*: *//' "$p/state" 2>/dev/null) ll=$(cat "$p/link_layer" 2>/dev/null)
      [ "$ll" = InfiniBand ] && tr=InfiniBand
      echo "${d##*/}|${p##*/}|PORT_$st|$tr|$ll|$(basename "$(readlink "$d/device/driver" 2>/dev/null)" 2>/dev/null)|$(cat "$d/fw_ver" 2>/dev/null)|$(cat "$p/rate" 2>/dev/null)|||$(cat "$p/gid_attrs/ndevs/0" 2>/dev/null)|"
    done
  done >>"$P"
  enum_how="sysfs: 'rdmabench devices --json' failed (exit $enum_rc, devices.err)"
fi
echo "devices from: $enum_how" >>"$H"
enum_err=''
[ -s "$P" ] || enum_err=$(head -n 1 "$R/devices.err")
command -v ibv_devinfo >/dev/null 2>&1 && ibv_devinfo -v >"$R/ibv_devinfo.txt" 2>&1
"$bin" devices >"$R/devices.txt" 2>&1
# sysfs: what ibv_devinfo leaves out (PCI link, NUMA node, rate strings, board id).
# rd reads a one-line file into $rv with the shell's own read, no process per file.
rd() { rv=''; read -r rv <"$1" 2>/dev/null || :; }
for d in /sys/class/infiniband/*; do
  [ -d "$d" ] || continue
  echo "${d##*/}:"
  for f in node_type fw_ver hca_type board_id node_desc parent; do
    [ -r "$d/$f" ] && rd "$d/$f" && echo "  $f: $rv"
  done
  [ -e "$d/device" ] && echo "  device: $(readlink -f "$d/device" 2>/dev/null) driver $(basename "$(readlink "$d/device/driver" 2>/dev/null)" 2>/dev/null)"
  for f in numa_node current_link_speed current_link_width max_link_speed max_link_width vendor device subsystem_device; do
    [ -r "$d/device/$f" ] && rd "$d/device/$f" && echo "  pci $f: $rv"
  done
  for p in "$d"/ports/*; do
    [ -d "$p" ] || continue
    rd "$p/state"; st=$rv; rd "$p/phys_state"; ph=$rv; rd "$p/link_layer"; ll=$rv; rd "$p/rate"; ra=$rv
    rd "$p/gid_attrs/ndevs/0"
    echo "  port ${p##*/}: state $st, phys $ph, $ll, rate $ra, netdev $rv"
  done
done >"$R/sysfs.txt" 2>&1

# select: the ports to check (-d narrows the devices)
: >"$R/plan.txt"
if [ -n "$devs" ]; then
  for w in $(echo "$devs" | tr ',' ' '); do
    grep -q "^$w|" "$P" || echo "$w|-|no such device" >>"$R/skipped.txt"
  done
fi
while IFS='|' read -r dev port state tr ll drv fw speed width mtu nd ip4; do
  if [ -n "$devs" ]; then
    case ,$devs, in *,"$dev",*) ;; *) continue ;; esac
  fi
  if [ "$state" != PORT_ACTIVE ]; then
    echo "$dev|$port|$state (not ACTIVE): skipped" >>"$R/skipped.txt"
  elif [ "$tr" = iWARP ] && [ -z "$ip4" ]; then
    echo "$dev|$port|iWARP port without an IPv4 address on ${nd:-its netdev}: rdma_cm needs one; skipped" >>"$R/skipped.txt"
  else
    echo "$dev|$port|$tr|$ll|$ip4" >>"$R/plan.txt"
  fi
done <"$P"

# --- the runs --------------------------------------------------------------------------
nports=$(grep -c . "$R/plan.txt")
ntests=0
for o in $(echo "$ops" | tr ',' ' '); do
  for m in $(echo "$modes" | tr ',' ' '); do
    if [ "$m" = lat ]; then s=$lat_sizes; else s=$bw_sizes; fi
    ntests=$((ntests + $(echo "$s" | tr ',' '\n' | grep -c .)))
  done
done
total=$((nports * ntests * reps * (1 + use_pt)))
step=0 nfail=0
next_port=$tcp_port

# fail_note NAME RC FILE...: a failed run into failures.txt, with its output's tail
fail_note() {
  n=$1 rc=$2; shift 2
  nfail=$((nfail + 1))
  {
    echo "=== $n: exit $rc$([ "$rc" = 124 ] || [ "$rc" = 137 ] && echo " (timed out after $run_to s)")"
    for f in "$@"; do
      [ -s "$f" ] || continue
      echo "--- ${f#"$R"/} (last 30 lines)"
      tail -n 30 "$f"
    done
  } >>"$R/failures.txt"
  say "FAILED: $n (exit $rc; see failures.txt in the report)"
}

# rb_once FILE: one rdmabench loopback run of the current test; rc in rc, value in val
rb_once() {
  f=$1
  set -- loopback -d "$dev" -i "$port" --op "$op" --mode "$mode" -s "$size" -n "$iters" --inline-size perftest
  [ "$mode" = bw ] && set -- "$@" -t "$tx_depth" -Q "$cq_mod"
  [ "$tr" = iWARP ] && set -- "$@" --rdma-cm
  echo "$bin $* --json $f.json" >"$f.cmd"
  timeout -k 5 "$run_to" "$bin" "$@" --json "$f.json" >"$f.txt" 2>&1
  rc=$?
  val=''
  if [ -s "$f.json" ]; then
    set -- $(rb_tsv "$f.json" p50 mib gid)
    if [ "$mode" = bw ]; then
      val=$2
    elif isnum "$1"; then
      val=$(awk -v v="$1" 'BEGIN { printf "%.3f", v / 1000 }')
    fi
    [ "$ll" = Ethernet ] && isnum "$3" && [ -z "$gid" ] && gid=$3
  fi
  isnum "$val" || { [ $rc = 0 ] && rc=65; val=''; }
}

# pt_once FILE: one perftest server and client pair of the current test, the
# server started first; the client tries again (up to 20 times, 0.25 s apart)
# while the server is not listening yet. rc in rc, value in val
pt_once() {
  f=$1 tool=ib_${op}_$mode
  next_port=$((next_port + 1))
  set -- -d "$dev" -i "$port" -s "$size" -n "$iters" -p "$next_port"
  [ "$mode" = bw ] && set -- "$@" -t "$tx_depth" -Q "$cq_mod"
  if [ "$tr" = iWARP ]; then
    set -- "$@" -R; host=$ip4
  else
    host=127.0.0.1
    [ "$ll" = Ethernet ] && [ -n "$gid" ] && set -- "$@" -x "$gid"
  fi
  echo "$tool $* (server); $tool $* $host (client)" >"$f.cmd"
  timeout -k 5 "$run_to" "$tool" "$@" >"$f.server.txt" 2>&1 &
  spid=$!
  try=0 pt_t0=$(date +%s)
  while :; do
    timeout -k 5 "$run_to" "$tool" "$@" "$host" >"$f.txt" 2>&1
    rc=$?
    [ $rc = 0 ] && break
    try=$((try + 1))
    # stop when the server is gone (it ran and failed) or after 20 tries
    kill -0 $spid 2>/dev/null && [ $try -lt 20 ] && [ $(($(date +%s) - pt_t0)) -lt "$run_to" ] || break
    sleep 0.25 2>/dev/null || sleep 1
  done
  [ $rc = 0 ] || kill $spid 2>/dev/null
  wait $spid
  src=$?
  [ $rc = 0 ] && rc=$src
  [ $try = 0 ] || echo "client started $((try + 1)) times (the server was not listening yet)" >>"$f.cmd"
  val=$(pt_col "$f.txt" "$([ "$mode" = lat ] && echo t_typical || echo bw_avg)")
  isnum "$val" || { [ $rc = 0 ] && rc=65; val=''; }
}

# one TOOL REP: a run of the current test, once more if it fails (a loaded host can
# fail one run), recorded in results.tsv
one() {
  who=$1 r=$2
  step=$((step + 1))
  f=$R/runs/$dev-p$port/$op-$mode-$size.$who$r
  say "[$step/$total] $dev port $port: $op $mode $size B, $([ "$who" = rb ] && echo rdmabench || echo perftest) run $r"
  t0=$(uptime_cs) tries=1
  ${who}_once "$f"
  if [ $rc != 0 ]; then
    tries=2
    for x in "$f".txt "$f".server.txt "$f".json; do [ -e "$x" ] && mv "$x" "${x%.*}.try1.${x##*.}"; done
    fail1=$rc
    say "$dev port $port $op $mode $size B $who$r: exit $rc; running it once more"
    ${who}_once "$f"
    echo "first try: exit $fail1 (its output: $(basename "$f").try1.*)" >>"$f.cmd"
    [ $rc = 0 ] || fail_note "$dev port $port: $op $mode $size B, $who run $r" $rc "$f.cmd" "$f.txt" "$f.server.txt"
  fi
  secs=$(awk -v a="$t0" -v b="$(uptime_cs)" 'BEGIN { printf "%.2f", (b - a) / 100 }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dev" "$port" "$op" "$mode" "$size" "$who" "$r" "$rc" "$secs" "${val:--}" $tries >>"$R/results.tsv"
}

t_start=$(date +%s)
spid=''
trap '[ -z "$spid" ] || kill $spid 2>/dev/null; say "interrupted: the runs so far are in $R"; exit 130' INT TERM
while IFS='|' read -r dev port tr ll ip4; do
  mkdir -p "$R/runs/$dev-p$port"
  gid=''
  for op in $(echo "$ops" | tr ',' ' '); do
    for mode in $(echo "$modes" | tr ',' ' '); do
      if [ "$mode" = lat ]; then s=$lat_sizes iters=$lat_iters; else s=$bw_sizes iters=$bw_iters; fi
      for size in $(echo "$s" | tr ',' ' '); do
        r=1
        while [ $r -le "$reps" ]; do
          # rdmabench perftest, perftest rdmabench, ...: both tools' mean position is the same
          # every 2 runs; rdmabench first, as perftest takes its GID index
          if [ $((r % 2)) = 1 ] || [ $use_pt = 0 ]; then
            one rb $r; [ $use_pt = 1 ] && one pt $r
          else
            one pt $r; one rb $r
          fi
          r=$((r + 1))
        done
      done
    done
  done
  # the settings perftest reports (relaxed ordering, GID, MTU) from its last run of each mode
  for mode in $(echo "$modes" | tr ',' ' '); do
    last=$(ls "$R/runs/$dev-p$port"/*-$mode-*.pt*.txt 2>/dev/null | grep -v -e server -e try1 | tail -n 1)
    [ -n "$last" ] || continue
    ro='' gi='' mtu='' inl='' cm='' # one parser call for the five (a process start each)
    { read -r ro; read -r gi; read -r mtu; read -r inl; read -r cm; } <<EOF
$("$bin" import perftest --show 'setting:PCIe relax order' --show 'setting:GID index' --show setting:Mtu \
  --show 'setting:Max inline data' --show 'setting:rdma_cm QPs' "$last" 2>/dev/null)
EOF
    echo "$dev|$port|$mode: PCIe relax order $ro, GID index $gi, MTU $mtu, inline $inl, rdma_cm QPs $cm" >>"$R/perftest-settings.txt"
  done
done <"$R/plan.txt"
# --expect-*: the ports judged by 'rdmabench accept', its table in the summary
arc=0
if [ -n "$exp_bw$exp_lat" ] && [ -s "$R/plan.txt" ]; then
  say "judging the ports against the expectations (rdmabench accept)"
  set -- accept -d "$(awk -F'|' '!s[$1]++ { printf "%s%s", (n++ ? "," : ""), $1 }' "$R/plan.txt")" --json "$R/accept.json"
  [ -z "$exp_bw" ] || set -- "$@" --expect-bw "$exp_bw"
  [ -z "$exp_lat" ] || set -- "$@" --expect-lat "$exp_lat"
  echo "$bin $*" >"$R/accept.cmd"
  timeout -k 5 $((run_to * 20)) "$bin" "$@" >"$R/accept.txt" 2>&1
  arc=$?
fi
t_end=$(date +%s)
trap - INT TERM

# --- the summary ----------------------------------------------------------------------
first_json=$(ls "$R"/runs/*/*.rb*.json 2>/dev/null | grep -v try1 | head -n 1)
nothing=''
if [ ! -s "$P" ]; then
  nothing="nothing checked: no RDMA device"
elif [ ! -s "$R/plan.txt" ]; then
  nothing="nothing checked: no ACTIVE port (see 'skipped' above)"
fi
S=$R/summary.txt
{
  echo "rdmabench hardware check, $(sed -n 's/^date: //p' "$H")"
  grep -E '^(kernel|os|cpu|rdmabench|rdma-core|perftest): ' "$H"
  if [ -n "$first_json" ]; then
    set -- $(rb_tsv "$first_json" rc cs)
    echo "rdma-core (rdmabench's view): $1; clocksource $2"
  fi
  echo "devices ($enum_how):"
  if [ -s "$P" ]; then
    while IFS='|' read -r dev port state tr ll drv fw speed width mtu nd ip4; do
      echo "  $dev port $port: $state, $tr ($ll), driver ${drv:-?}, firmware ${fw:-?}, link ${speed:-?} ${width}, MTU ${mtu:-?}, netdev ${nd:--}${ip4:+ $ip4}"
    done <"$P"
  else
    echo "  none${enum_err:+: $enum_err}"
  fi
  x=$(grep -E '^hca_id|^[[:space:]]+(transport|fw_ver|vendor_id|vendor_part_id|hw_ver|board_id|phys_port_cnt|port:|state|active_width|active_speed|phys_state|link_layer|active_mtu):' \
    "$R/ibv_devinfo.txt" 2>/dev/null | sed 's/^[[:space:]]*/  /')
  [ -z "$x" ] || printf 'ibv_devinfo -v (excerpt; whole in ibv_devinfo.txt):\n%s\n' "$x"
  [ -s "$P" ] || ! grep -q . "$R/adapters.txt" 2>/dev/null || { echo "network adapters (lspci):"; sed 's/^/  /' "$R/adapters.txt"; }
  if [ -s "$R/skipped.txt" ]; then
    echo "skipped:"
    sed 's/^\([^|]*\)|\([^|]*\)|/  \1 port \2: /; s/|*$//' "$R/skipped.txt"
  fi
  if [ -s "$R/plan.txt" ]; then
    echo
    echo "results: medians of $reps runs per tool; lat: rdmabench p50 and perftest t_typical, usec"
    echo "(send, write: RTT/2; read: RTT); bw: MiB/s (perftest's MB/sec is MiB/s); ratio: rdmabench/perftest"
    echo "(lat: lower is better, bw: higher); '!' marks a ratio 10 % or more in perftest's favour"
    awk -F'\t' -v pt="$use_pt" '
      function median(k,   n, i, j, t, a) {
        n = split(v[k], a, " ")
        for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        if (n == 0) return ""
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
        if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
        if ($8 == 0 && $10 != "-") { v[k SUBSEP $6] = v[k SUBSEP $6] " " $10; cnt[k SUBSEP $6]++ }
        else bad[k SUBSEP $6]++ }
      END {
        printf "  %-10s %4s %-5s %-4s %8s %12s %12s %8s\n", "device", "port", "op", "mode", "bytes", "rdmabench", (pt ? "perftest" : "-"), (pt ? "ratio" : "")
        for (i = 1; i <= nk; i++) {
          k = order[i]; split(k, x, SUBSEP)
          rb = median(k SUBSEP "rb"); p = pt ? median(k SUBSEP "pt") : ""
          rbs = (rb == "") ? "failed" : sprintf("%.2f", rb); ps = !pt ? "" : (p == "") ? "failed" : sprintf("%.2f", p)
          r = ""; flag = ""
          if (rb != "" && p != "" && p + 0 > 0) {
            r = sprintf("%.3f", rb / p)
            if ((x[4] == "lat" && rb / p >= 1.10) || (x[4] == "bw" && rb / p <= 0.90)) flag = " !"
          }
          note = ""
          if (bad[k SUBSEP "rb"] || bad[k SUBSEP "pt"]) note = sprintf(" (failed runs: rdmabench %d, perftest %d)", bad[k SUBSEP "rb"], bad[k SUBSEP "pt"])
          printf "  %-10s %4s %-5s %-4s %8s %12s %12s %8s%s%s\n", x[1], x[2], x[3], x[4], x[5], rbs, ps, r, flag, note
        }
      }' "$R/results.tsv"
    [ -s "$R/perftest-settings.txt" ] && { echo "perftest's settings:"; sed 's/^\([^|]*\)|\([^|]*\)|/  \1 port \2: /' "$R/perftest-settings.txt"; }
    n=$(awk -F'\t' '$8 == 0 && $11 == 2' "$R/results.tsv" | grep -c .)
    [ "$n" = 0 ] || echo "retried: $n run(s) failed once and passed when run again (the first output: runs/*/*.try1.*)"
    echo "time: $((t_end - t_start)) s for $step runs (each at most $run_to s); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  fi
  if [ -s "$R/accept.txt" ]; then
    echo
    echo "expectations (rdmabench accept, exit $arc; accept.json in the report):"
    sed -n '/^Node acceptance/,$p' "$R/accept.txt" | sed 's/^/  /'
  fi
  echo
  if [ -n "$nothing" ]; then
    echo "$nothing"
  elif [ $nfail = 0 ]; then
    echo "failures: none"
  else
    echo "failures: $nfail run(s) failed twice; their commands and output are in failures.txt"
  fi
} >"$S"

tar -C "$outdir" -czf "$R.tar.gz" "$name" || die "cannot write $R.tar.gz" 3
cat "$S"
[ $keep = 1 ] || rm -rf "$R"
echo
echo "Report: $R.tar.gz ($(($(wc -c <"$R.tar.gz") / 1024 + 1)) KiB)"
echo "Please send it back: attach it to an issue at https://github.com/rdmabench/rdmabench/issues"
echo "(title: 'hw-check: <your NIC>'), or mail it to the maintainers. It holds this host's"
echo "kernel, CPU, RDMA devices with their GIDs and IP addresses, and the runs' output; nothing else."
if [ -n "$nothing" ]; then
  say "error: $nothing${enum_err:+: $enum_err}"
  exit 3
fi
[ $nfail = 0 ] || exit 1
case $arc in 0 | 11 | 12) exit $arc ;; esac
say "rdmabench accept: exit $arc (see accept.txt in the report)"
exit 1
