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
     rdmabench loopback --mode lat --size 2 --iters N
  2. 64 KiB WRITE bandwidth for SECS seconds: ib_write_bw -s 65536 -D SECS vs
     rdmabench loopback --op write --mode bw --size 64K -D SECSs, both with
     tx depth 128 and CQ moderation 100 given explicitly
  3. rdmabench's peak RSS for a SEND latency run of --rss-small vs --rss-large iterations
Each latency and bandwidth comparison runs in ABBA order (perftest, rdmabench,
rdmabench, perftest) back to back, so linear drift cancels; the figures are the
means of each tool's two runs (= median of 2). Then it prints the raw figures and
the ratios with their targets, each marked PASS or MISS.

Options:
  --iters N           latency iterations per run (default 20000)
  --bw-duration SECS  bandwidth measuring time per run, whole seconds (default 3)
  --rss-small N       iterations of the small RSS run (default 10000)
  --rss-large N       iterations of the large RSS run (default 1000000)
  --keep DIR          keep the raw outputs (guest /out, guest log, summary) in DIR
  -h, --help          show this help

Environment: RDMABENCH_BIN (default build/rdmabench; built with 'make build' if missing).
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
# Runs in the SoftRoCE guest. Env: N BWDUR RSS_SMALL RSS_LARGE. Raw outputs go to
# /out; /out/status gets one "NAME RC" line per run. Progress lines start with
# "bench-guest:".
O=/out
port=19100
fail=0
step=0
steps=$((3 * 4 + 4 + 2))
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

# pt NAME TIMEOUT TOOL ARGS...: one perftest server/client pair on a fresh port
pt() {
  name=$1 t=$2 tool=$3; shift 3
  step=$((step + 1)); port=$((port + 1))
  say "[$step/$steps] $name: $tool $*"
  timeout "$t" "$tool" -d rxe0 -x 1 -p $port "$@" >$O/$name.server.txt 2>&1 &
  spid=$!
  wait_listen $port || say "note: $tool server not listening on port $port after 15 s"
  timeout "$t" "$tool" -d rxe0 -x 1 -p $port "$@" 127.0.0.1 >$O/$name.txt 2>&1
  crc=$?
  [ $crc = 0 ] || kill $spid 2>/dev/null
  wait $spid
  src=$?
  [ $crc = 0 ] && crc=$src
  status "$name" $crc
}

# rb NAME TIMEOUT ARGS...: one rdmabench loopback run, JSON to /out/NAME.json
rb() {
  name=$1 t=$2; shift 2
  step=$((step + 1)); port=$((port + 1))
  say "[$step/$steps] $name: rdmabench loopback $*"
  timeout "$t" rdmabench loopback -d rxe0 -p $port "$@" --json $O/$name.json >$O/$name.txt 2>&1
  status "$name" $?
}

# rss NAME TIMEOUT ITERS: rdmabench SEND latency run, polling VmHWM as a fallback
rss() {
  name=$1 t=$2 n=$3
  step=$((step + 1)); port=$((port + 1))
  say "[$step/$steps] $name: rdmabench loopback --op send --mode lat --size 2 --iters $n"
  rdmabench loopback -d rxe0 -p $port --op send --mode lat --size 2 --iters "$n" \
    --json $O/$name.json >$O/$name.txt 2>&1 &
  pid=$! hwm='' s=0
  while kill -0 $pid 2>/dev/null; do
    h=$(awk '/^VmHWM:/ { print $2 }' /proc/$pid/status 2>/dev/null)
    [ -n "$h" ] && hwm=$h
    s=$((s + 1))
    if [ $s -gt "$t" ]; then say "timeout after ${t}s: $name"; kill $pid; fi
    sleep 1
  done
  wait $pid
  rc=$?
  echo "${hwm:-0}" >$O/$name.vmhwm_kb
  status "$name" $rc
}

: >$O/status
ib_send_lat -V >$O/perftest-version.txt 2>&1
rdmabench version >$O/rdmabench-version.txt 2>&1
date +%s >$O/t0

# 1. latency, ABBA per operation; 500 us per iteration is a generous timeout
tl=$((60 + N / 2000))
for op in send write read; do
  pt lat-$op-pt1 $tl ib_${op}_lat -s 2 -n "$N"
  rb lat-$op-rb1 $tl --op $op --mode lat --size 2 --iters "$N"
  rb lat-$op-rb2 $tl --op $op --mode lat --size 2 --iters "$N"
  pt lat-$op-pt2 $tl ib_${op}_lat -s 2 -n "$N"
done
date +%s >$O/t1

# 2. bandwidth, ABBA; same duration, tx depth and CQ moderation given to both
tb=$((BWDUR + 60))
pt bw-pt1 $tb ib_write_bw -s 65536 -D "$BWDUR" -t 128 -Q 100
rb bw-rb1 $tb --op write --mode bw --size 64K -D "${BWDUR}s" --tx-depth 128 --cq-mod 100
rb bw-rb2 $tb --op write --mode bw --size 64K -D "${BWDUR}s" --tx-depth 128 --cq-mod 100
pt bw-pt2 $tb ib_write_bw -s 65536 -D "$BWDUR" -t 128 -Q 100
date +%s >$O/t2

# 3. peak RSS
rss rss-small $((60 + RSS_SMALL / 2000)) "$RSS_SMALL"
rss rss-large $((60 + RSS_LARGE / 2000)) "$RSS_LARGE"
date +%s >$O/t3

say "done (failures: $fail)"
exit $fail
GUEST

# Generous guest timeout: boot + about 100 us per latency iteration + the rest.
est=$((60 + 12 * (10 + iters / 10000) + 4 * (bwdur + 15) + (rss_small + rss_large) / 10000 + 40))
vm_timeout=$((est * 2 + 120))
((vm_timeout >= 600)) || vm_timeout=600

echo "Booting one SoftRoCE guest for ${iters}-iteration latency, ${bwdur} s bandwidth and" \
  "${rss_small} vs ${rss_large} iteration RSS runs (guest timeout ${vm_timeout} s)..." >&2
t_start=$(date +%s)
set +e
"$SCRIPT_DIR/vm-run.sh" --timeout "$vm_timeout" --bin "$bin" \
  --file "$work/bench-guest.sh:/work/bench-guest.sh" \
  --env "N=$iters" --env "BWDUR=$bwdur" --env "RSS_SMALL=$rss_small" --env "RSS_LARGE=$rss_large" \
  --outdir "$out" -- sh /work/bench-guest.sh 2>&1 | tee "$work/guest.log" | grep --line-buffered '^bench-guest:' >&2
vmrc=${PIPESTATUS[0]}
set -e
t_end=$(date +%s)

if [[ -n $keep ]]; then
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
bad=0
problem() { err "error: $*"; bad=1; }
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
  if isnum "$v"; then printf '%s' "$v"; else problem "$1.txt: no number in column $2 of the result row"; fi
}
# pt_hdr NAME LABEL: a value from perftest's header ("CQ Moderation   : 100")
pt_hdr() {
  sed -n "s/^ *$2 *: *\\([0-9]*\\).*/\\1/p" "$out/$1.txt" 2>/dev/null | head -n 1
}

while read -r name rc; do
  [[ $rc == 0 ]] || problem "run $name failed (exit $rc); see its output with --keep"
done <"$out/status"
for need in lat-send-pt1 lat-send-rb1 lat-send-rb2 lat-send-pt2 lat-write-pt1 lat-write-rb1 \
            lat-write-rb2 lat-write-pt2 lat-read-pt1 lat-read-rb1 lat-read-rb2 lat-read-pt2 \
            bw-pt1 bw-rb1 bw-rb2 bw-pt2 rss-small rss-large; do
  grep -q "^$need " "$out/status" || problem "run $need never ran (guest stopped early?)"
done
((vmrc == 0)) || problem "vm-run.sh exited $vmrc"

mean2() { if isnum "$1" && isnum "$2"; then calc "($1 + $2) / 2"; fi; }
us() { if isnum "$1"; then calc "$1 / 1000"; fi; } # ns -> us

declare -A R=()
for op in send write read; do
  for r in 1 2; do
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
    R[$op.$m]=$(mean2 "${R[$op.${m%%.*}1.${m#*.}]}" "${R[$op.${m%%.*}2.${m#*.}]}")
  done
done

# perftest's "MB/sec": decide from MsgRate x size whether it is 2^20 or 10^6 bytes/s
bw_unit_note=''
for r in 1 2; do
  avg=$(pt_col "bw-pt$r" 4) mpps=$(pt_col "bw-pt$r" 5) size=$(pt_col "bw-pt$r" 1)
  if isnum "$avg" && isnum "$mpps" && isnum "$size"; then
    mib=$(calc "$mpps * $size / 1048576") mb=$(calc "$mpps * $size / 1000000")
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
R[bw.pt]=$(mean2 "${R[bw.pt1]:-}" "${R[bw.pt2]:-}")
R[bw.rb]=$(mean2 "${R[bw.rb1]:-}" "${R[bw.rb2]:-}")

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
    if isnum "$kb" && [[ $kb != 0 ]]; then v=$((kb * 1024)); rss_src='VmHWM polled once a second (no peak_rss_bytes)'; else v=''; fi
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

report() {
  local ptv rbv
  ptv=$(sed -n 's/^Version: *//p' "$out/perftest-version.txt" 2>/dev/null | head -n 1)
  rbv=$(head -n 1 "$out/rdmabench-version.txt" 2>/dev/null)
  echo "rdmabench vs perftest, rxe0 (SoftRoCE on lo) in one qemu TCG guest, 2 vCPUs"
  echo "perftest ${ptv:-?} | ${rbv:-rdmabench ?} | guest wall: lat $(( $(cat "$out/t1") - $(cat "$out/t0") )) s," \
    "bw $(( $(cat "$out/t2") - $(cat "$out/t1") )) s, rss $(( $(cat "$out/t3") - $(cat "$out/t2") )) s" 2>/dev/null || true
  echo "Order: every comparison ran perftest, rdmabench, rdmabench, perftest back to back"
  echo "(ABBA, cancels linear drift); figures are each tool's mean of its 2 runs (= median of 2)."
  echo
  printf '%-24s %9s %9s %9s | %9s %9s %9s | %s\n' "latency 2 B, ${iters} it [us]" \
    t_typical t_avg p99 p50 mean p99 "runs: t_typical / p50"
  printf '%-24s %29s | %29s |\n' '' 'perftest' 'rdmabench'
  for op in send write read; do
    printf '%-24s %9s %9s %9s | %9s %9s %9s | %s %s / %s %s\n' \
      "$op $([[ $op == read ]] && echo '(RTT)' || echo '(RTT/2)')" \
      "$(num %.2f "${R[$op.pt.typ]}")" "$(num %.2f "${R[$op.pt.avg]}")" "$(num %.2f "${R[$op.pt.p99]}")" \
      "$(num %.2f "${R[$op.rb.p50]}")" "$(num %.2f "${R[$op.rb.mean]}")" "$(num %.2f "${R[$op.rb.p99]}")" \
      "$(num %.2f "${R[$op.pt1.typ]}")" "$(num %.2f "${R[$op.pt2.typ]}")" \
      "$(num %.2f "${R[$op.rb1.p50]}")" "$(num %.2f "${R[$op.rb2.p50]}")"
  done
  printf 'WRITE bw 64 KiB, %s s, tx 128, CQ mod 100: ib_write_bw avg %s MiB/s (%s, %s) | rdmabench %s MiB/s (%s, %s)\n' \
    "$bwdur" "$(num %.2f "${R[bw.pt]}")" "$(num %.2f "${R[bw.pt1]:-}")" "$(num %.2f "${R[bw.pt2]:-}")" \
    "$(num %.2f "${R[bw.rb]}")" "$(num %.2f "${R[bw.rb1]:-}")" "$(num %.2f "${R[bw.rb2]:-}")"
  [[ -z $bw_unit_note ]] || echo "  ($bw_unit_note)"
  printf 'peak RSS, rdmabench SEND lat: %s it %s MiB (%s B), %s it %s MiB (%s B) [%s]\n' \
    "$(pow10 "$rss_small")" "$(num %.2f "$(calc "${R[rss.small]:-0} / 1048576")")" "${R[rss.small]:-n/a}" \
    "$(pow10 "$rss_large")" "$(num %.2f "$(calc "${R[rss.large]:-0} / 1048576")")" "${R[rss.large]:-n/a}" "$rss_src"
  echo
  printf '%-46s %10s  %-10s %s\n' ratio value target result
  local op v
  for op in send write read; do
    v=''
    isnum "${R[$op.rb.p50]}" && isnum "${R[$op.pt.typ]}" && v=$(calc "${R[$op.rb.p50]} / ${R[$op.pt.typ]}")
    printf '%-46s %10s  %-10s %s\n' "$op: rdmabench p50 / perftest t_typical" "$(num %.3f "$v")" 0.95-1.05 \
      "$(isnum "$v" && pass_range "$v" 0.95 1.05 || echo 'n/a')"
  done
  v=''
  isnum "${R[bw.rb]}" && isnum "${R[bw.pt]}" && v=$(calc "${R[bw.rb]} / ${R[bw.pt]}")
  printf '%-46s %10s  %-10s %s\n' "bw: rdmabench / ib_write_bw average (MiB/s)" "$(num %.3f "$v")" '>= 0.95' \
    "$(isnum "$v" && pass_ge "$v" 0.95 || echo 'n/a')"
  v=''
  isnum "${R[rss.small]}" && isnum "${R[rss.large]}" && v=$(calc "(${R[rss.large]} - ${R[rss.small]}) / 1048576")
  printf '%-46s %10s  %-10s %s\n' "peak RSS growth $(pow10 "$rss_small") -> $(pow10 "$rss_large") it (MiB)" \
    "$(num %.3f "$v")" '< 4 MiB' "$(isnum "$v" && pass_lt "$v" 4 || echo 'n/a')"
  echo
  echo "host wall time: $((t_end - t_start)) s (one guest boot)"
}

report | tee "$work/summary.txt"
[[ -z $keep ]] || { cp "$work/summary.txt" "$keep/summary.txt"; echo "raw outputs kept in $keep" >&2; }
if ((bad)); then
  err "some runs failed or numbers could not be parsed (see above)"
  exit 1
fi
exit 0
