#!/usr/bin/env bash
# bench-vs-perftest.sh: run rdmabench and perftest side by side in ONE SoftRoCE
# guest (scripts/vm-run.sh) and compare them: 2 B SEND/WRITE/READ latency, 64 KiB
# WRITE bandwidth, and rdmabench's peak RSS growth with the iteration count.
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
readonly REPO

usage() {
  cat <<EOF
Usage: $PROG [--iters N] [--bw-duration SECS] [--rss-small N] [--rss-large N] [--rounds N] [--keep DIR]

Boots one qemu SoftRoCE guest (scripts/vm-run.sh) and runs there, side by side:
  1. 2 B latency, SEND, WRITE and READ: ib_{send,write,read}_lat -n N vs
     rdmabench loopback --mode lat --size 2 --iters N --inline-size perftest (no inline, as perftest on rxe)
  2. 64 KiB WRITE bandwidth for SECS seconds: ib_write_bw -s 65536 -D SECS vs
     rdmabench loopback --op write --mode bw --size 64K -D SECSs, both with
     tx depth 128 and CQ moderation 100 given explicitly
  3. the same over 4 QPs: ib_write_bw -q 4 vs rdmabench --qps 4 --threads 1 (perftest
     drives its QPs from one thread), and on 1 QP connected by rdma_cm on rxe1
     (192.0.2.1 on dummy0): ib_write_bw -R vs rdmabench --rdma-cm, and both ways at once:
     ib_write_bw -b (server and client, as perftest requires) vs rdmabench -b; both
     report the sum of the two directions
  1b. inline: rdmabench's default (probe: SEND 236 B, WRITE 220 B on rxe) against ib_send_lat/ib_write_lat -I
     with the same size (perftest turns -I off on devices it does not recognise, rxe among them)
  4. rdmabench's peak RSS for a SEND latency run of --rss-small vs --rss-large iterations
Each latency and bandwidth comparison runs 4 times per tool, interleaved back to
back in the order perftest rdmabench rdmabench perftest rdmabench perftest perftest
rdmabench (ABBA BAAB: both tools have the same mean position, so linear drift
cancels); every figure is the median of the tool's 4 runs, so one run disturbed
by the host does not decide the result. Then it prints the raw figures and the
ratios with their targets, each marked PASS or MISS.

Options:
  --iters N           latency iterations per run (default 20000)
  --bw-duration SECS  bandwidth measuring time per run, whole seconds (default 3)
  --rss-small N       iterations of the small RSS run (default 10000)
  --rss-large N       iterations of the large RSS run (default 1000000)
  --rounds N          repeat the 8-run ABBA BAAB order N times (default 1: 4 runs per
                      tool); more rounds narrow the intervals, and take N times as long
  --keep DIR          keep the raw outputs (guest /out, guest log, summary) in DIR
  -h, --help          show this help

Environment: RDMABENCH_BIN (default build/rdmabench; built with 'make build' if missing);
BENCH_VM_APPEND: extra guest kernel arguments (vm-run.sh --append), e.g. 'tsc=reliable'
to give the guest the TSC clocksource instead of HPET (see the note in the output);
BENCH_FROM_DIR: skip the guest and re-parse a --keep directory (same options needed).
Exit status: 0 if every run completed and every number parsed (a missed target is
not a failure: emulated RDMA is noisy); 1 if a run failed or a number could not be
parsed; 2 on bad usage; vm-run.sh's 124/125 if the guest timed out or failed.
EOF
}

err() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { err "error: $*"; exit 2; }

iters=20000 bwdur=3 rss_small=10000 rss_large=1000000 keep='' rounds=1
need_arg() { (($2 >= 2)) || die "$1 needs an argument (see -h)"; }
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift; set -- "$opt" "$val" "$@"; continue ;;
    --iters) need_arg "$1" $#; iters=$2; shift 2 ;;
    --bw-duration) need_arg "$1" $#; bwdur=$2; shift 2 ;;
    --rss-small) need_arg "$1" $#; rss_small=$2; shift 2 ;;
    --rss-large) need_arg "$1" $#; rss_large=$2; shift 2 ;;
    --keep) need_arg "$1" $#; keep=$2; shift 2 ;;
    --rounds) need_arg "$1" $#; rounds=$2; shift 2 ;;
    *) err "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
done
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got: $2"; }
posint --iters "$iters"
posint --bw-duration "$bwdur"
posint --rss-small "$rss_small"
posint --rss-large "$rss_large"
posint --rounds "$rounds"
((iters >= 1000)) || die "--iters must be at least 1000 (perftest's 99.9% and rdmabench's p99.9 need it)"
((rss_large > rss_small)) || die "--rss-large must exceed --rss-small"

bin=${RDMABENCH_BIN:-$REPO/build/rdmabench}
if [[ ! -x $bin ]]; then
  [[ -z ${RDMABENCH_BIN:-} ]] || die "RDMABENCH_BIN=$bin: not an executable"
  err "no $bin yet: running 'make build'"
  make -C "$REPO" -s build >&2 || die "make build failed"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-perftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$work/out
mkdir -p "$out"

# --- the guest side (busybox sh) -------------------------------------------------
cat >"$work/bench-guest.sh" <<'GUEST'
#!/bin/sh
# Runs in the SoftRoCE guest. Env: N BWDUR RSS_SMALL RSS_LARGE, ORDER (run order of
# perftest "pt" and rdmabench "rb"), RB_PORT (1: loopback takes -p). Raw outputs go to
# /out; /out/status gets one "NAME RC" line per run. Progress lines start with
# "bench-guest:".
O=/out
port=19100
fail=0
step=0
set -- $ORDER
steps=$((9 * $# + 2))
say() { echo "bench-guest: $*"; }
status() { echo "$1 $2" >>$O/status; [ "$2" = 0 ] || { fail=1; say "FAILED: $1 (exit $2)"; }; }

# wait_listen PORT: until something listens on TCP PORT (at most 15 s)
wait_listen() {
  hex=$(printf '%04X' "$1") i=0
  while [ $i -lt 150 ]; do
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" \
      '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

# pt_bad FILE: whether perftest's result row has inf/nan (its CPU-frequency
# calibration failed: "Correlation coefficient r^2 ... < 0.9", seen under TCG),
# as rdmabench's parser of perftest's output reads it
pt_bad() {
  rdmabench import perftest --show row "$1" 2>&1 >/dev/null | grep -q 'not a finite number'
}

# pt NAME TIMEOUT TOOL ARGS...: a perftest pair; retried up to twice if it printed inf/nan
pt() {
  step=$((step + 1))
  say "[$step/$steps] $1: $3 $(shift 3; echo "$*")"
  try=1
  while :; do
    pt_once "$@"
    [ "$crc" = 0 ] && pt_bad $O/$1.txt || break
    [ $try -ge 3 ] && { say "$1: perftest printed inf/nan $try times"; break; }
    mv $O/$1.txt $O/$1.try$try.txt
    say "$1: perftest printed inf/nan (its clock calibration failed); retrying"
    try=$((try + 1))
  done
  status "$1" $crc
}

pt_once() {
  name=$1 t=$2 tool=$3; shift 3
  port=$((port + 1))
  timeout "$t" "$tool" $PT_DEV -p $port "$@" >$O/$name.server.txt 2>&1 &
  spid=$!
  if [ "$PT_HOST" = 127.0.0.1 ]; then
    wait_listen $port || say "note: $tool server not listening on port $port after 15 s"
  else
    sleep 2 # rdma_cm listens in the RDMA port space, not in /proc/net/tcp
  fi
  timeout "$t" "$tool" $PT_DEV -p $port "$@" $PT_HOST >$O/$name.txt 2>&1
  crc=$?
  [ $crc = 0 ] || kill $spid 2>/dev/null
  wait $spid
  src=$?
  [ $crc = 0 ] && crc=$src
}

# perftest's device and server address: rxe0 on lo (GID 1) by default; the
# rdma_cm runs (-R) use rxe1 on dummy0, as rdma_cm resolves no loopback address
PT_DEV='-d rxe0 -x 1' PT_HOST=127.0.0.1 RB_DEV=rxe0

# rbport: "-p PORT" if this rdmabench's loopback takes a control port (RB_PORT=1)
rbport() { [ "$RB_PORT" = 1 ] && echo "-p $port"; }

# rb NAME TIMEOUT ARGS...: one rdmabench loopback run, JSON to /out/NAME.json
rb() {
  name=$1 t=$2; shift 2
  step=$((step + 1)); port=$((port + 1))
  say "[$step/$steps] $name: rdmabench loopback $*"
  timeout "$t" rdmabench loopback -d $RB_DEV $(rbport) "$@" --json $O/$name.json >$O/$name.txt 2>&1
  status "$name" $?
}

# rss NAME TIMEOUT ITERS POLL: rdmabench SEND latency run; with POLL=1 also poll
# VmHWM every 0.2 s as a fallback for a binary without peak_rss_bytes (polling
# steals CPU from the two busy-polling engine threads, so it is off by default)
rss() {
  name=$1 t=$2 n=$3 poll=$4
  step=$((step + 1)); port=$((port + 1))
  say "[$step/$steps] $name: rdmabench loopback --op send --mode lat --size 2 --iters $n$([ "$poll" = 1 ] && echo ' (polling VmHWM)')"
  if [ "$poll" != 1 ]; then
    timeout "$t" rdmabench loopback -d rxe0 $(rbport) --op send --mode lat --size 2 --iters "$n" \
      --json $O/$name.json >$O/$name.txt 2>&1
    status "$name" $?
    return
  fi
  rdmabench loopback -d rxe0 $(rbport) --op send --mode lat --size 2 --iters "$n" \
    --json $O/$name.json >$O/$name.txt 2>&1 &
  pid=$! hwm='' s=0
  while kill -0 $pid 2>/dev/null; do
    # skip readings of the forked shell before it has exec'd rdmabench
    if [ "$(cat /proc/$pid/comm 2>/dev/null)" = rdmabench ]; then
      while read -r k v _; do [ "$k" = VmHWM: ] && hwm=$v; done 2>/dev/null </proc/$pid/status
    fi
    s=$((s + 1))
    if [ $s -gt $((t * 5)) ]; then say "timeout after ${t}s: $name"; kill $pid; fi
    sleep 0.2
  done
  wait $pid
  rc=$?
  echo "${hwm:-0}" >$O/$name.vmhwm_kb
  status "$name" $rc
}

: >$O/status
ib_send_lat -V >$O/perftest-version.txt 2>&1
rdmabench version >$O/rdmabench-version.txt 2>&1
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >$O/clocksource 2>/dev/null
date +%s >$O/t0

# 1. latency, in $ORDER per operation; 500 us per iteration is a generous timeout
tl=$((60 + N / 2000))
for op in send write read; do
  a=0 b=0
  for who in $ORDER; do
    if [ $who = pt ]; then
      a=$((a + 1)); pt lat-$op-pt$a $tl ib_${op}_lat -s 2 -n "$N"
    else
      b=$((b + 1)); rb lat-$op-rb$b $tl --op $op --mode lat --size 2 --iters "$N" --inline-size perftest
    fi
  done
done
# 1b. inline: rdmabench's default (the device probe: SEND 236 B, WRITE 220 B on rxe)
# against perftest given the same size with -I (perftest turns -I off on devices
# it does not recognise, rxe among them: its header then says 0[B])
for op in send write; do
  n=236; [ $op = write ] && n=220
  a=0 b=0
  for who in $ORDER; do
    if [ $who = pt ]; then
      a=$((a + 1)); pt ilat-$op-pt$a $tl ib_${op}_lat -s 2 -n "$N" -I $n
    else
      b=$((b + 1)); rb ilat-$op-rb$b $tl --op $op --mode lat --size 2 --iters "$N"
    fi
  done
done
date +%s >$O/t1

# 2. bandwidth, same order; same duration, tx depth and CQ moderation given to both
# (perftest's own default at 64 KiB is CQ moderation 1: it turns moderation off
# above 8 KiB unless -Q is given)
tb=$((BWDUR + 60))
a=0 b=0
for who in $ORDER; do
  if [ $who = pt ]; then
    a=$((a + 1)); pt bw-pt$a $tb ib_write_bw -s 65536 -D "$BWDUR" -t 128 -Q 100
  else
    b=$((b + 1)); rb bw-rb$b $tb --op write --mode bw --size 64K -D "${BWDUR}s" --tx-depth 128 --cq-mod 100
  fi
done
# 2b. bandwidth over 4 QPs, same settings; one thread drives all of them in both tools
a=0 b=0
for who in $ORDER; do
  if [ $who = pt ]; then
    a=$((a + 1)); pt bwq-pt$a $tb ib_write_bw -s 65536 -D "$BWDUR" -t 128 -Q 100 -q 4
  else
    b=$((b + 1)); rb bwq-rb$b $tb --op write --mode bw --size 64K -D "${BWDUR}s" --tx-depth 128 --cq-mod 100 --qps 4 --threads 1
  fi
done
# 2c. the same 1-QP bandwidth with QPs created and connected by rdma_cm (-R / --rdma-cm)
PT_DEV='-d rxe1' PT_HOST=192.0.2.1 RB_DEV=rxe1
a=0 b=0
for who in $ORDER; do
  if [ $who = pt ]; then
    a=$((a + 1)); pt bwcm-pt$a $tb ib_write_bw -R -s 65536 -D "$BWDUR" -t 128 -Q 100
  else
    b=$((b + 1)); rb bwcm-rb$b $tb --rdma-cm --op write --mode bw --size 64K -D "${BWDUR}s" --tx-depth 128 --cq-mod 100
  fi
done
PT_DEV='-d rxe0 -x 1' PT_HOST=127.0.0.1 RB_DEV=rxe0
# 2d. the same 1-QP bandwidth both ways at once: -b on both perftest sides (it
# requires that), -b on rdmabench's client (its server learns it from the test)
a=0 b=0
for who in $ORDER; do
  if [ $who = pt ]; then
    a=$((a + 1)); pt bwb-pt$a $tb ib_write_bw -b -s 65536 -D "$BWDUR" -t 128 -Q 100
  else
    b=$((b + 1)); rb bwb-rb$b $tb --op write --mode bw --size 64K -D "${BWDUR}s" --tx-depth 128 --cq-mod 100 -b
  fi
done
date +%s >$O/t2

# 3. peak RSS
rss rss-small $((60 + RSS_SMALL / 2000)) "$RSS_SMALL" 0
poll=0
jcheck $O/rss-small.json 'peak_rss_bytes > 0' >/dev/null 2>&1 || poll=1 # scripts/jcheck decodes the JSON
if [ $poll = 1 ]; then
  say "no peak_rss_bytes in rdmabench's JSON: falling back to polling VmHWM"
  steps=$((steps + 1))
  rss rss-small $((60 + RSS_SMALL / 2000)) "$RSS_SMALL" 1
fi
rss rss-large $((60 + RSS_LARGE / 2000)) "$RSS_LARGE" $poll
date +%s >$O/t3

say "done (failures: $fail)"
exit $fail
GUEST

# Generous guest timeout: boot + about 100 us per latency iteration + the rest.
order=''
for ((i = 0; i < rounds; i++)); do order+="${order:+ }pt rb rb pt rb pt pt rb"; done
reps=$((4 * rounds)) # runs per tool in $order
est=$((60 + rounds * (24 * (10 + iters / 10000) + 32 * (bwdur + 15)) + (rss_small + rss_large) / 10000 + 40))
vm_timeout=$((est * 2 + 120))
((vm_timeout >= 600)) || vm_timeout=600

# Older rdmabench builds had a loopback control port (-p); give each run its own.
rb_port=0
if "$bin" loopback --help 2>&1 | grep -q -- '--port'; then rb_port=1; fi

[[ -n ${BENCH_FROM_DIR:-} ]] || echo "Booting one SoftRoCE guest for ${iters}-iteration latency, ${bwdur} s bandwidth and" \
    "${rss_small} vs ${rss_large} iteration RSS runs (guest timeout ${vm_timeout} s)..." >&2
# Run a snapshot of vm-run.sh: bash reads a script as it goes, so an edit to it
# during this long run would derail it.
mkdir -p "$work/scripts"
cp "$SCRIPT_DIR/vm-run.sh" "$work/scripts/vm-run.sh"
[[ ! -f $SCRIPT_DIR/vm-lib.sh ]] || cp "$SCRIPT_DIR/vm-lib.sh" "$work/scripts/" # vm-run.sh sources it
[[ ! -f $SCRIPT_DIR/install-deps.sh ]] || cp "$SCRIPT_DIR/install-deps.sh" "$work/scripts/"
t_start=$(date +%s)
nproc_host=$(nproc 2>/dev/null || echo 0)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
others=$(pgrep -c qemu-system-x86 2>/dev/null || true)
if [[ -n ${BENCH_FROM_DIR:-} ]]; then # re-parse a --keep directory, no guest
  cp -r "$BENCH_FROM_DIR/." "$out/"
  cp "$out/guest.log" "$work/guest.log" 2>/dev/null || : >"$work/guest.log"
  vmrc=0
else
# the guest's JSON check (scripts/jcheck, pure Go): does the binary write peak_rss_bytes
(cd "$REPO" && CGO_ENABLED=0 go build -o "$work/jcheck" ./scripts/jcheck) || die "cannot build scripts/jcheck"
set +e
"$work/scripts/vm-run.sh" --timeout "$vm_timeout" --bin "$bin" --bin "$work/jcheck" ${BENCH_VM_APPEND:+--append "$BENCH_VM_APPEND"} \
  --file "$work/bench-guest.sh:/work/bench-guest.sh" \
  --env "RB_PORT=$rb_port" --env "N=$iters" --env "ORDER=$order" --env "BWDUR=$bwdur" --env "RSS_SMALL=$rss_small" --env "RSS_LARGE=$rss_large" \
  --outdir "$out" -- sh /work/bench-guest.sh 2>&1 | tee "$work/guest.log" | grep --line-buffered '^bench-guest:' >&2
vmrc=${PIPESTATUS[0]}
set -e
fi
t_end=$(date +%s)
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

if [[ -n $keep && -z ${BENCH_FROM_DIR:-} ]]; then
  mkdir -p "$keep" || die "--keep $keep: cannot create it"
  cp -r "$out/." "$keep/"
  cp "$work/guest.log" "$keep/guest.log"
fi
if [[ ! -s $out/status ]]; then
  err "error: the guest run failed (vm-run.sh exit $vmrc) and brought back no results; last lines:"
  tail -n 30 "$work/guest.log" >&2
  exit $((vmrc == 0 ? 1 : vmrc))
fi

# --- the analysis on the host: Go (scripts/vsperftest) reads rdmabench's documents and
# perftest's output (bench/perftest, as 'rdmabench import perftest'), takes medians and
# ratios with their bootstrap intervals; exit 1 when a run failed or a figure is missing
report() {
  (cd "$REPO" && go build -o "$work/vsperftest" ./scripts/vsperftest) || { err "error: cannot build scripts/vsperftest"; return 1; }
  "$work/vsperftest" -prog "$PROG" -dir "$out" -iters "$iters" -bw-duration "$bwdur" \
    -rss-small "$rss_small" -rss-large "$rss_large" -reps "$reps" -vmrc "$vmrc" -host-secs $((t_end - t_start)) \
    -nproc "$nproc_host" -load-start "$load_start" -load-end "$load_end" -others "${others:-?}"
}

set +e
report | tee "$work/summary.txt"
arc=${PIPESTATUS[0]}
set -e
[[ -z $keep || -n ${BENCH_FROM_DIR:-} ]] || { cp "$work/summary.txt" "$keep/summary.txt"; echo "raw outputs kept in $keep" >&2; }
exit $((arc == 0 ? 0 : 1))
