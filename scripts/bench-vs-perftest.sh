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
Usage: $PROG [--iters N] [--bw-duration SECS] [--rss-small N] [--rss-large N] [--keep DIR]

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

iters=20000 bwdur=3 rss_small=10000 rss_large=1000000 keep=''
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
    *) err "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
done
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got: $2"; }
posint --iters "$iters"
posint --bw-duration "$bwdur"
posint --rss-small "$rss_small"
posint --rss-large "$rss_large"
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
# calibration failed: "Correlation coefficient r^2 ... < 0.9", seen under TCG)
pt_bad() {
  awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print; exit }' "$1" | grep -qi 'inf\|nan'
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
grep -q '"peak_rss_bytes"' $O/rss-small.json 2>/dev/null || poll=1
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
order='pt rb rb pt rb pt pt rb'
reps=4 # runs per tool in $order
est=$((60 + 24 * (10 + iters / 10000) + 32 * (bwdur + 15) + (rss_small + rss_large) / 10000 + 40))
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
set +e
"$work/scripts/vm-run.sh" --timeout "$vm_timeout" --bin "$bin" ${BENCH_VM_APPEND:+--append "$BENCH_VM_APPEND"} \
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

# --- parsing on the host (awk only; no jq needed) ------------------------------
# problem may run in a command substitution (a subshell): record it in a file
problems=$work/problems
: >"$problems"
problem() { err "error: $*"; printf '%s\n' "$*" >>"$problems"; }
isnum() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
fmt() { awk -v v="$2" "BEGIN { printf \"$1\", v }"; }

# flatten FILE: a JSON document as "path=value" lines (results.0.latency_ns.p50=...)
flatten() {
  awk '
  { s = s $0 "\n" }
  END {
    n = length(s); i = 1; d = 0
    while (i <= n) {
      c = substr(s, i, 1)
      if (c == "{") { d++; typ[d] = "o"; ek[d] = 1; key[d] = ""; i++; continue }
      if (c == "[") { d++; typ[d] = "a"; idx[d] = 0; i++; continue }
      if (c == "}" || c == "]") { d--; i++; continue }
      if (c == ",") { if (typ[d] == "a") idx[d]++; else ek[d] = 1; i++; continue }
      if (c == ":" || c == " " || c == "\t" || c == "\n" || c == "\r") { i++; continue }
      if (c == "\"") {
        rest = substr(s, i + 1)
        match(rest, /^([^"\\]|\\.)*/)
        v = substr(rest, 1, RLENGTH); i += RLENGTH + 2
        if (typ[d] == "o" && ek[d]) { key[d] = v; ek[d] = 0; continue }
      } else {
        if (!match(substr(s, i), /^[-+.0-9a-zA-Z]+/)) { print "flatten: bad JSON at " i > "/dev/stderr"; exit 1 }
        v = substr(s, i, RLENGTH); i += RLENGTH
      }
      p = ""
      for (k = 1; k <= d; k++) p = p (k > 1 ? "." : "") (typ[k] == "o" ? key[k] : idx[k])
      print p "=" v
    }
  }' "$1"
}

# jget NAME PATH: a number from /out/NAME.json, or "" (and a problem) if absent
jget() {
  local f=$out/$1.json v
  if [[ ! -s $f ]]; then problem "$1.json missing"; return 0; fi
  [[ -s $work/$1.flat ]] || flatten "$f" >"$work/$1.flat" || problem "$1.json: cannot parse"
  v=$(awk -v k="$2" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$work/$1.flat")
  if isnum "$v"; then printf '%s' "$v"; else problem "$1.json: no number at $2 (got '${v}')"; fi
}

# pt_row NAME: perftest's first result row (the line after the "#bytes" header)
pt_row() {
  awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print; exit }' "$out/$1.txt" 2>/dev/null
}
# pt_col NAME COL: one column of that row, as a number
pt_col() {
  local v
  v=$(pt_row "$1" | awk -v c="$2" '{ print $c }')
  if isnum "$v"; then printf '%s' "$v"; else problem "$1.txt: no number in column $2 of the result row (got '${v}')"; fi
}
# pt_hdr NAME LABEL: a value from perftest's header ("CQ Moderation   : 100")
pt_hdr() {
  sed -n "s/^ *$2 *: *\\([0-9]*\\).*/\\1/p" "$out/$1.txt" 2>/dev/null | head -n 1
}

while read -r name rc; do
  [[ $rc == 0 ]] || problem "run $name failed (exit $rc); see its output with --keep"
done <"$out/status"
needs=(rss-small rss-large)
for ((r = 1; r <= reps; r++)); do
  for t in pt rb; do
    needs+=("lat-send-$t$r" "lat-write-$t$r" "lat-read-$t$r" "bw-$t$r")
  done
done
for need in "${needs[@]}"; do
  grep -q "^$need " "$out/status" || problem "run $need never ran (guest stopped early?)"
done
((vmrc == 0)) || problem "vm-run.sh exited $vmrc"

# median V...: the median of the numeric arguments (none numeric: empty)
median() {
  local v
  for v in "$@"; do if isnum "$v"; then printf '%s\n' "$v"; fi; done | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.6f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# runs KEY: the per-run values of R[KEY] (KEY with a "#" where the run number goes)
runs() { local r; for ((r = 1; r <= reps; r++)); do printf '%s\n' "${R[${1/\#/$r}]:-}"; done; }
us() { if isnum "$1"; then calc "$1 / 1000"; fi; } # ns -> us

declare -A R=()
for op in send write read; do
  for ((r = 1; r <= reps; r++)); do
    R[$op.pt$r.typ]=$(pt_col "lat-$op-pt$r" 5)
    R[$op.pt$r.avg]=$(pt_col "lat-$op-pt$r" 6)
    R[$op.pt$r.p99]=$(pt_col "lat-$op-pt$r" 8)
    R[$op.rb$r.p50]=$(us "$(jget "lat-$op-rb$r" results.0.latency_ns.p50)")
    R[$op.rb$r.mean]=$(us "$(jget "lat-$op-rb$r" results.0.latency_ns.mean)")
    R[$op.rb$r.p99]=$(us "$(jget "lat-$op-rb$r" results.0.latency_ns.p99)")
    it=$(jget "lat-$op-rb$r" results.0.iterations)
    [[ -z $it || $it == "$iters" ]] || problem "lat-$op-rb$r: $it iterations, wanted $iters"
    it=$(pt_col "lat-$op-pt$r" 2)
    [[ -z $it || $it == "$iters" ]] || problem "lat-$op-pt$r: $it iterations, wanted $iters"
  done
  for m in pt.typ pt.avg pt.p99 rb.p50 rb.mean rb.p99; do
    mapfile -t vals < <(runs "$op.${m%%.*}#.${m#*.}")
    R[$op.$m]=$(median "${vals[@]}")
  done
done

for op in send write; do
  for ((r = 1; r <= reps; r++)); do
    R[$op.ipt$r.typ]=$(pt_col "ilat-$op-pt$r" 5)
    R[$op.irb$r.p50]=$(us "$(jget "ilat-$op-rb$r" results.0.latency_ns.p50)")
    R[$op.irb.inline]=$(jget "ilat-$op-rb$r" results.0.inline_bytes)
    R[$op.ipt.inline]=$(pt_hdr "ilat-$op-pt$r" 'Max inline data')
  done
  for m in ipt.typ irb.p50; do
    mapfile -t vals < <(runs "$op.${m%%.*}#.${m#*.}")
    R[$op.$m]=$(median "${vals[@]}")
  done
done

# perftest's "MB/sec": decide from MsgRate x size whether it is 2^20 or 10^6 bytes/s
bw_unit_note=''
for ((r = 1; r <= reps; r++)); do
  avg=$(pt_col "bw-pt$r" 4) mpps=$(pt_col "bw-pt$r" 5) size=$(pt_col "bw-pt$r" 1) n=$(pt_col "bw-pt$r" 2)
  if [[ $n == 0 ]]; then
    # seen under host contention with a short -D: perftest's margin is duration/4 (integer)
    problem "bw-pt$r: ib_write_bw measured 0 iterations (try a longer --bw-duration)"
  elif isnum "$avg" && isnum "$mpps" && isnum "$size"; then
    mib=$(calc "$mpps * $size * 1000000 / 1048576") mb=$(calc "$mpps * $size")
    unit=$(awk -v a="$avg" -v i="$mib" -v m="$mb" 'BEGIN {
      di = (a - i) / a; if (di < 0) di = -di; dm = (a - m) / a; if (dm < 0) dm = -dm
      print (di < 0.02 && di < dm) ? "MiB" : (dm < 0.02 ? "MB" : "?") }')
    case $unit in
      MiB) R[bw.pt$r]=$avg ;;
      MB) R[bw.pt$r]=$(calc "$avg * 1000000 / 1048576") ;;
      *) problem "bw-pt$r: BW average $avg matches neither MsgRate x size in MiB/s ($mib) nor MB/s ($mb)" ;;
    esac
    bw_unit_note="perftest 'MB/sec' checked against MsgRate x size: it is ${unit}/s"
  fi
  R[bw.rb$r]=$(jget "bw-rb$r" results.0.bandwidth.mib_per_s)
  for who in pt rb; do
    if [[ $who == pt ]]; then
      tx=$(pt_hdr "bw-pt$r" 'TX depth') cq=$(pt_hdr "bw-pt$r" 'CQ Moderation')
    else
      tx=$(jget "bw-rb$r" results.0.tx_depth) cq=$(jget "bw-rb$r" results.0.cq_mod)
    fi
    [[ $tx == 128 && $cq == 100 ]] ||
      err "warning: bw-$who$r ran with tx depth '${tx}' and CQ moderation '${cq}', not 128/100"
  done
done
# 4 QPs, rdma_cm and both ways: the same unit as the single-QP runs (checked above);
# ib_write_bw -b prints the sum of both sides' averages (its #iterations are its own side's)
for k in bwq bwcm bwb; do
  for ((r = 1; r <= reps; r++)); do
    avg=$(pt_col "$k-pt$r" 4)
    if isnum "$avg"; then
      case $bw_unit_note in
        *MB/s*) R[$k.pt$r]=$(calc "$avg * 1000000 / 1048576") ;;
        *) R[$k.pt$r]=$avg ;;
      esac
    else
      problem "$k-pt$r: no BW average from ib_write_bw ($(case $k in bwq) echo '-q 4' ;; bwcm) echo '-R' ;; *) echo '-b' ;; esac))"
    fi
    R[$k.rb$r]=$(jget "$k-rb$r" results.0.bandwidth.mib_per_s)
    if [[ $k == bwb ]]; then # rdmabench's two sides, for the record
      R[bwb.rbc$r]=$(jget "$k-rb$r" results.0.sides.client.bandwidth.mib_per_s)
      R[bwb.rbs$r]=$(jget "$k-rb$r" results.0.sides.server.bandwidth.mib_per_s)
    fi
  done
  mapfile -t vals < <(runs "$k.pt#")
  R[$k.pt]=$(median "${vals[@]}")
  mapfile -t vals < <(runs "$k.rb#")
  R[$k.rb]=$(median "${vals[@]}")
done
mapfile -t vals < <(runs 'bw.pt#')
R[bw.pt]=$(median "${vals[@]}")
mapfile -t vals < <(runs 'bw.rb#')
R[bw.rb]=$(median "${vals[@]}")

# peak RSS: the JSON's peak_rss_bytes, else VmHWM polled in the guest
rss_src=peak_rss_bytes
for s in small large; do
  v=''
  if [[ -s $out/rss-$s.json ]]; then
    flatten "$out/rss-$s.json" >"$work/rss-$s.flat" 2>/dev/null || true
    v=$(awk -F= '$1 == "peak_rss_bytes" { print $2; exit }' "$work/rss-$s.flat")
  fi
  if ! isnum "$v" || [[ $v == 0 ]]; then
    kb=$(cat "$out/rss-$s.vmhwm_kb" 2>/dev/null || true)
    if isnum "$kb" && [[ $kb != 0 ]]; then v=$((kb * 1024)); rss_src='VmHWM polled every 0.2 s, a lower bound (no peak_rss_bytes)'; else v=''; fi
  fi
  isnum "$v" || problem "rss-$s: no peak RSS (neither peak_rss_bytes nor VmHWM)"
  R[rss.$s]=$v
done

# --- report ------------------------------------------------------------------------
pass_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { print (v >= lo && v <= hi) ? "PASS" : "MISS" }'; }
pass_ge() { awk -v v="$1" -v lo="$2" 'BEGIN { print (v >= lo) ? "PASS" : "MISS" }'; }
pass_lt() { awk -v v="$1" -v hi="$2" 'BEGIN { print (v < hi) ? "PASS" : "MISS" }'; }
num() { if isnum "$2"; then fmt "$1" "$2"; else printf 'n/a'; fi; }
pow10() { awk -v n="$1" 'BEGIN { k = 0; m = n; while (m >= 10 && m % 10 == 0) { m /= 10; k++ }
  if (m == 1 && k > 1) print "10^" k; else print n }'; }

list() { local x out=''; while IFS= read -r x; do out+=" $(num "$1" "$x")"; done; printf '%s' "$out"; }

report() {
  local ptv rbv op v
  ptv=$(sed -n 's/^Version: *//p' "$out/perftest-version.txt" 2>/dev/null | head -n 1)
  rbv=$(head -n 1 "$out/rdmabench-version.txt" 2>/dev/null)
  echo "rdmabench vs perftest, rxe0 (SoftRoCE on lo) in one qemu TCG guest, 2 vCPUs"
  local t0 t1 t2 t3
  t0=$(cat "$out/t0" 2>/dev/null) t1=$(cat "$out/t1" 2>/dev/null)
  t2=$(cat "$out/t2" 2>/dev/null) t3=$(cat "$out/t3" 2>/dev/null)
  secs() { if isnum "$1" && isnum "$2"; then echo "$(($2 - $1)) s"; else echo '?'; fi; }
  echo "perftest ${ptv:-?} | ${rbv:-rdmabench ?} | guest time: lat $(secs "$t0" "$t1")," \
    "bw $(secs "$t1" "$t2"), rss $(secs "$t2" "$t3")"
  local cs
  cs=$(cat "$out/clocksource" 2>/dev/null || true)
  echo "guest clocksource: ${cs:-?}$([[ ${cs:-} == tsc* ]] || echo ' (not TSC: clock_gettime is a ~1 us syscall + timer read under TCG;'\
' rdmabench times with clock_gettime, perftest with rdtsc)')"
  echo "Order: each comparison ran $reps times per tool back to back, interleaved ABBA BAAB"
  echo "(A = perftest; linear drift cancels); figures are the median of each tool's $reps runs."
  echo
  printf '%-22s %9s %9s %9s | %9s %9s %9s\n' "latency 2 B [usec]" t_typical t_avg p99 p50 mean p99
  printf '%-22s %29s | %29s\n' "$iters iterations" 'perftest' 'rdmabench'
  for op in send write read; do
    printf '%-22s %9s %9s %9s | %9s %9s %9s\n' \
      "$op $([[ $op == read ]] && echo '(RTT)' || echo '(RTT/2)')" \
      "$(num %.2f "${R[$op.pt.typ]}")" "$(num %.2f "${R[$op.pt.avg]}")" "$(num %.2f "${R[$op.pt.p99]}")" \
      "$(num %.2f "${R[$op.rb.p50]}")" "$(num %.2f "${R[$op.rb.mean]}")" "$(num %.2f "${R[$op.rb.p99]}")"
  done
  printf '%-22s %29s | %29s\n' "inline, 2 B [usec]" "t_typical, -I as rdmabench" "p50, rdmabench's default"
  for op in send write; do
    printf '%-22s %29s | %29s\n' "$op (RTT/2)" "$(num %.2f "${R[$op.ipt.typ]}") (-I ${R[$op.irb.inline]:-?}, ran ${R[$op.ipt.inline]:-?})" \
      "$(num %.2f "${R[$op.irb.p50]}") (inline ${R[$op.irb.inline]:-?} B)"
  done
  printf '%-22s %29s | %29s\n' "WRITE bw 64 KiB [MiB/s]" "ib_write_bw avg $(num %.2f "${R[bw.pt]}")" \
    "rdmabench $(num %.2f "${R[bw.rb]}")"
  printf '%-22s %29s | %29s\n' "  ... over 4 QPs" "ib_write_bw -q 4 $(num %.2f "${R[bwq.pt]}")" \
    "--qps 4 $(num %.2f "${R[bwq.rb]}")"
  printf '%-22s %29s | %29s\n' "  ... with rdma_cm" "ib_write_bw -R $(num %.2f "${R[bwcm.pt]}")" \
    "--rdma-cm $(num %.2f "${R[bwcm.rb]}")"
  printf '%-22s %29s | %29s\n' "  ... both ways (-b)" "ib_write_bw -b $(num %.2f "${R[bwb.pt]}")" \
    "-b $(num %.2f "${R[bwb.rb]}")"
  echo "  (${bwdur} s per run, tx depth 128, CQ moderation 100 for both; -b: the sum of both directions in both tools)"
  echo "per run, in run order (perftest | rdmabench):"
  for op in send write read; do
    printf '  %-5s t_typical%s | p50%s\n' "$op" "$(runs "$op.pt#.typ" | list %.2f)" "$(runs "$op.rb#.p50" | list %.2f)"
  done
  for op in send write; do
    printf '  %-5s -I t_typical%s | inline p50%s\n' "$op" "$(runs "$op.ipt#.typ" | list %.2f)" "$(runs "$op.irb#.p50" | list %.2f)"
  done
  printf '  bw    MiB/s%s | MiB/s%s\n' "$(runs 'bw.pt#' | list %.2f)" "$(runs 'bw.rb#' | list %.2f)"
  printf '  bw x4 MiB/s%s | MiB/s%s\n' "$(runs 'bwq.pt#' | list %.2f)" "$(runs 'bwq.rb#' | list %.2f)"
  printf '  bw cm MiB/s%s | MiB/s%s\n' "$(runs 'bwcm.pt#' | list %.2f)" "$(runs 'bwcm.rb#' | list %.2f)"
  printf '  bw -b MiB/s%s | MiB/s%s\n' "$(runs 'bwb.pt#' | list %.2f)" "$(runs 'bwb.rb#' | list %.2f)"
  printf '  bw -b rdmabench client side MiB/s%s, server side MiB/s%s\n' "$(runs 'bwb.rbc#' | list %.2f)" "$(runs 'bwb.rbs#' | list %.2f)"
  [[ -z $bw_unit_note ]] || echo "  ($bw_unit_note)"
  printf 'peak RSS, rdmabench SEND lat: %s it %s MiB (%s B), %s it %s MiB (%s B) [%s]\n' \
    "$(pow10 "$rss_small")" "$(num %.2f "$(calc "${R[rss.small]:-0} / 1048576")")" "${R[rss.small]:-n/a}" \
    "$(pow10 "$rss_large")" "$(num %.2f "$(calc "${R[rss.large]:-0} / 1048576")")" "${R[rss.large]:-n/a}" "$rss_src"
  echo
  printf '%-46s %10s  %-10s %s\n' ratio value target result
  for op in send write read; do
    v=''
    isnum "${R[$op.rb.p50]}" && isnum "${R[$op.pt.typ]}" && v=$(calc "${R[$op.rb.p50]} / ${R[$op.pt.typ]}")
    printf '%-46s %10s  %-10s %s\n' "$op: rdmabench p50 / perftest t_typical (no inline)" "$(num %.3f "$v")" 0.95-1.05 \
      "$(isnum "$v" && pass_range "$v" 0.95 1.05 || echo 'n/a')"
  done
  for op in send write; do
    v=''
    isnum "${R[$op.irb.p50]}" && isnum "${R[$op.ipt.typ]}" && v=$(calc "${R[$op.irb.p50]} / ${R[$op.ipt.typ]}")
    printf '%-46s %10s  %-10s %s\n' "$op inline: rdmabench default / ib_${op}_lat -I" "$(num %.3f "$v")" '<= 1.00' \
      "$(isnum "$v" && pass_range "$v" 0 1.02 || echo 'n/a')"
    v=''
    isnum "${R[$op.irb.p50]}" && isnum "${R[$op.rb.p50]}" && v=$(calc "${R[$op.irb.p50]} / ${R[$op.rb.p50]}")
    printf '%-46s %10s  %-10s %s\n' "$op inline effect: default / --inline-size perftest" "$(num %.3f "$v")" 'info' ''
  done
  v=''
  isnum "${R[bw.rb]}" && isnum "${R[bw.pt]}" && v=$(calc "${R[bw.rb]} / ${R[bw.pt]}")
  printf '%-46s %10s  %-10s %s\n' "bw: rdmabench / ib_write_bw average (MiB/s)" "$(num %.3f "$v")" '>= 0.95' \
    "$(isnum "$v" && pass_ge "$v" 0.95 || echo 'n/a')"
  v=''
  isnum "${R[bwq.rb]}" && isnum "${R[bwq.pt]}" && v=$(calc "${R[bwq.rb]} / ${R[bwq.pt]}")
  printf '%-46s %10s  %-10s %s\n' "bw 4 QPs: rdmabench / ib_write_bw -q 4" "$(num %.3f "$v")" '>= 0.95' \
    "$(isnum "$v" && pass_ge "$v" 0.95 || echo 'n/a')"
  v=''
  isnum "${R[bwcm.rb]}" && isnum "${R[bwcm.pt]}" && v=$(calc "${R[bwcm.rb]} / ${R[bwcm.pt]}")
  printf '%-46s %10s  %-10s %s\n' "bw rdma_cm: --rdma-cm / ib_write_bw -R" "$(num %.3f "$v")" '>= 0.95' \
    "$(isnum "$v" && pass_ge "$v" 0.95 || echo 'n/a')"
  v=''
  isnum "${R[bwb.rb]}" && isnum "${R[bwb.pt]}" && v=$(calc "${R[bwb.rb]} / ${R[bwb.pt]}")
  printf '%-46s %10s  %-10s %s\n' "bw both ways: -b / ib_write_bw -b (sums)" "$(num %.3f "$v")" '>= 0.95' \
    "$(isnum "$v" && pass_ge "$v" 0.95 || echo 'n/a')"
  v=''
  isnum "${R[rss.small]}" && isnum "${R[rss.large]}" && v=$(calc "(${R[rss.large]} - ${R[rss.small]}) / 1048576")
  printf '%-46s %10s  %-10s %s\n' "peak RSS growth $(pow10 "$rss_small") -> $(pow10 "$rss_large") it (MiB)" \
    "$(num %.3f "$v")" '< 4 MiB' "$(isnum "$v" && pass_lt "$v" 4 || echo 'n/a')"
  echo
  echo "host wall time: $((t_end - t_start)) s (one guest boot); host load avg $load_start at start," \
    "$load_end at end; $((nproc_host)) host CPUs; other qemu guests running at start: ${others:-?}"
}

report | tee "$work/summary.txt"
[[ -z $keep || -n ${BENCH_FROM_DIR:-} ]] || { cp "$work/summary.txt" "$keep/summary.txt"; echo "raw outputs kept in $keep" >&2; }
if [[ -s $problems ]]; then
  err "$(wc -l <"$problems") problem(s): some runs failed or numbers could not be parsed (see above)"
  exit 1
fi
exit 0
