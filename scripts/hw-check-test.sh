#!/usr/bin/env bash
# hw-check-test.sh: host-side tests of scripts/hw-check.sh (make script-test; no RDMA,
# no guest). With the real build/rdmabench on this host, which has no RDMA: exit 3
# and a clear message, the report still written. With stub rdmabench and perftest
# programs (a fixture of five devices: a down port sorting first, RoCE, a two-port
# InfiniBand device, iWARP with and without an IPv4 address): which ports run and
# which are skipped, the flags each tool gets (-i, -x from rdmabench's GID, --rdma-cm
# and -R on iWARP's address), the alternating order, the medians and ratios, a
# failed run (retried once, then in failures.txt, exit 1), a client started before
# its server listened, rdmabench's perftest links taken for perftest; under
# busybox sh, dash and bash where installed. Also: its reading of real result files
# (through 'rdmabench report --tsv'), and that it has no JSON or perftest parser of
# its own.
# The real path (rxe, siw, real perftest) is internal/e2e's TestHWCheck, in the bed.
set -uo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
HWC=$SCRIPT_DIR/hw-check.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/hw-check-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# --- usage errors: exit 2, naming the value -------------------------------------------
out=$(sh "$HWC" --reps 0 2>&1); rc=$?
check "--reps 0: exit 2, names it" test $rc = 2 -a -n "$(grep -- "--reps must be a positive whole number, got '0'" <<<"$out")"
out=$(sh "$HWC" --ops send,atomic 2>&1); rc=$?
check "--ops atomic: exit 2, names it" test $rc = 2 -a -n "$(grep "'atomic' is not one of" <<<"$out")"
out=$(sh "$HWC" --bin /nonexistent/rdmabench 2>&1); rc=$?
check "--bin missing: exit 3" test $rc = 3 -a -n "$(grep 'not an executable' <<<"$out")"

# --- its JSON reader on result files from real guest runs: rdmabench itself ------------
bin=${RDMABENCH_BIN:-$REPO/build/rdmabench}
jget_is() {
  local got
  got=$(sh "$HWC" --jget "$bin" "$REPO/$1" $2)
  [[ $got == "$3" ]] || { echo "     $1 $2: got '$got', want '$3'"; return 1; }
}
check "--jget reads real result files through 'rdmabench report --tsv'" eval '
  jget_is bench/fabric/testdata/roce.json "p50 gid dev" "17903.5 1 rxe1" &&
  jget_is bench/fabric/testdata/iwarp.json "op mode size" "send lat 2" &&
  jget_is bench/result/testdata/guest/cm.json "mib mode" "84.01843615738025 bw"'
check "no JSON reader of its own (no awk over rdmabench's JSON)" eval '
  ! grep -n "jflat\|jnums" "$HWC" && grep -q "report --tsv" "$HWC" && grep -q "devices --tsv" "$HWC"'

# --- it reads perftest's output with rdmabench's parser (rdmabench import perftest) ----
check "no perftest parser of its own (rdmabench import perftest reads the tables)" eval '
  ! grep -n "#bytes\|t_typical\[" "$HWC" && grep -q "import perftest --show \"column:" "$HWC"'

# --- without RDMA (this host): exit 3, clearly, and still a report ---------------------------
if [[ -x $bin ]]; then
  mkdir "$T/none"
  sh "$HWC" --bin "$bin" -o "$T/none" >"$T/none.out" 2>"$T/none.err"; rc=$?
  tgz=$(ls "$T"/none/*.tar.gz 2>/dev/null | head -n 1)
  check "no RDMA: exit 3" test $rc = 3
  check "no RDMA: says 'nothing checked: no RDMA device' and rdmabench's reason" \
    grep -q 'error: nothing checked: no RDMA device: rdmabench: ' "$T/none.err"
  check "no RDMA: the report exists, with host.txt and the summary" \
    eval '[[ -n $tgz ]] && tar -tzf "$tgz" >"$T/none.list" && grep -q "/host.txt$" "$T/none.list" &&
    [[ $(tar -xzOf "$tgz" --wildcards "*/summary.txt") == *"nothing checked: no RDMA device"* ]]'
  check "no RDMA: prints where the report is" grep -q "^Report: $T/none/rdmabench-hw-check-.*\.tar\.gz" "$T/none.out"
else
  bad "no $bin (make build)"
fi

# --- stubs ---------------------------------------------------------------------------------
S=$T/stub
mkdir -p "$S/bin" "$S/pt"
cat >"$S/devices.json" <<'EOF'
[
  {
    "name": "mlx5_0",
    "driver": "mlx5_core",
    "firmware": "28.39.1002",
    "transport": "RoCE",
    "ports": [
      {
        "port": 1,
        "state": "PORT_DOWN",
        "link_layer": "Ethernet",
        "active_mtu": 1024,
        "speed": "2.5 Gbps",
        "width": "1X",
        "gids": [],
        "netdev": "ens1f0"
      }
    ]
  },
  {
    "name": "mlx5_1",
    "driver": "mlx5_core",
    "firmware": "28.39.1002",
    "transport": "RoCE",
    "ports": [
      {
        "port": 1,
        "state": "PORT_ACTIVE",
        "link_layer": "Ethernet",
        "active_mtu": 4096,
        "speed": "100.0 Gbps",
        "width": "4X",
        "gids": [
          {
            "index": 3,
            "type": "RoCE v2",
            "gid": "::ffff:198.51.100.2",
            "netdev": "ens1f1"
          }
        ],
        "netdev": "ens1f1",
        "addresses": [
          "fe80::1",
          "198.51.100.2"
        ]
      }
    ]
  },
  {
    "name": "mlx4_0",
    "driver": "mlx4_core",
    "firmware": "2.42.5000",
    "transport": "InfiniBand",
    "ports": [
      {
        "port": 1,
        "state": "PORT_ACTIVE",
        "link_layer": "InfiniBand",
        "active_mtu": 4096,
        "speed": "14.0 Gbps",
        "width": "4X",
        "gids": [
          {
            "index": 0,
            "type": "IB",
            "gid": "fe80::2:c903:a:1",
            "netdev": ""
          }
        ]
      },
      {
        "port": 2,
        "state": "PORT_INIT",
        "link_layer": "InfiniBand",
        "active_mtu": 4096,
        "speed": "14.0 Gbps",
        "width": "4X",
        "gids": []
      }
    ]
  },
  {
    "name": "cxgb4_0",
    "driver": "cxgb4",
    "firmware": "1.27.4.0",
    "transport": "iWARP",
    "ports": [
      {
        "port": 1,
        "state": "PORT_ACTIVE",
        "link_layer": "Ethernet",
        "active_mtu": 4096,
        "speed": "25.0 Gbps",
        "width": "1X",
        "gids": [],
        "netdev": "enp2s0f4",
        "addresses": [
          "fe80::2",
          "198.51.100.7"
        ]
      }
    ]
  },
  {
    "name": "irdma0",
    "driver": "irdma",
    "firmware": "1.57",
    "transport": "iWARP",
    "ports": [
      {
        "port": 1,
        "state": "PORT_ACTIVE",
        "link_layer": "Ethernet",
        "active_mtu": 4096,
        "speed": "25.0 Gbps",
        "width": "1X",
        "gids": [],
        "netdev": "ens5",
        "addresses": [
          "fe80::3"
        ]
      }
    ]
  }
]
EOF
# rdmabench: --version, devices, and loopback writing a result document whose p50
# and bandwidth cycle over 3 values per test (medians 1.6 us, 9100 MiB/s; read lat on
# mlx5_1 1 us slower); read bw on cxgb4_0 fails
cat >"$S/bin/rdmabench" <<'EOF'
#!/bin/sh
echo "rdmabench $*" >>"$STUB_DIR/log"
case $1 in
  --version) echo "rdmabench 9.9.9 (stub)"; exit 0 ;;
  devices) case ${2:-} in --json) cat "$STUB_DIR/devices.json" ;; --tsv) exec "$REAL_RDMABENCH" "$@" ;; *) echo "(stub devices)" ;; esac; exit 0 ;;
  report) exec "$REAL_RDMABENCH" "$@" ;; # the real reader of its JSON (report --tsv)
  loopback) shift ;;
  import) exec "$REAL_RDMABENCH" "$@" ;; # the real parser of perftest's output
  *) exit 2 ;;
esac
dev='' op='' mode='' size='' json=''
while [ $# -gt 0 ]; do
  case $1 in -d) dev=$2; shift 2 ;; --op) op=$2; shift 2 ;; --mode) mode=$2; shift 2 ;;
    -s) size=$2; shift 2 ;; --json) json=$2; shift 2 ;; *) shift ;; esac
done
if [ "$dev.$op.$mode" = cxgb4_0.read.bw ]; then echo "rdmabench: read bw ${size}B: stub failure on purpose" >&2; exit 4; fi
c=$(cat "$STUB_DIR/count.$dev.$op.$mode" 2>/dev/null || echo 0)
echo $((c + 1)) >"$STUB_DIR/count.$dev.$op.$mode"
case $((c % 3)) in 0) p50=1600 bw=9100 ;; 1) p50=1500 bw=9500 ;; *) p50=1700 bw=8000 ;; esac
[ "$dev.$op.$mode" = mlx5_1.read.lat ] && p50=$((p50 + 1000))
[ "$mode" = lat ] || p50=null
[ "$mode" = bw ] || bw=0.001
cat >"$json" <<JSON
{
  "schema_version": 1,
  "environment": {
    "rdma_core_version": "50.0",
    "kernel_clocksource": "tsc",
    "device": "$dev",
    "gid_index": $([ "$dev" = mlx5_1 ] && echo 3 || echo 0),
    "checks": {
      "governor": "performance"
    }
  },
  "results": [
    {
      "op": "$op",
      "mode": "$mode",
      "size_bytes": $size,
      "latency_ns": {
        "min": 1000,
        "p50": $p50,
        "p99": 3000
      },
      "rtt_ns": {
        "p50": 9999999
      },
      "bandwidth": {
        "mib_per_s": $bw,
        "mpps": 0.5
      },
      "intervals": []
    }
  ],
  "warnings": [
    "stub, not a measurement"
  ]
}
JSON
echo " $op $mode $size (stub)"
EOF
# perftest: the server waits for its client (at most 5 s); the first client of the
# whole test is refused, as if its server were not listening yet; t_typical 2.00 us,
# BW average 10000 MB/sec
cat >"$S/pt/ib_stub" <<'EOF'
#!/bin/sh
tool=${0##*/}
echo "$tool $*" >>"$STUB_DIR/log"
[ "${1:-}" = --version ] && { echo " Version: 6.99"; exit 0; }
port='' host='' size=2 n=1000
while [ $# -gt 0 ]; do
  case $1 in -p) port=$2; shift 2 ;; -s) size=$2; shift 2 ;; -n) n=$2; shift 2 ;;
    -d|-i|-x|-t|-Q) shift 2 ;; -*) shift ;; *) host=$1; shift ;; esac
done
if [ -z "$host" ]; then
  i=0
  while [ ! -e "$STUB_DIR/done.$port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  [ -e "$STUB_DIR/done.$port" ] && echo " (stub server)" && exit 0
  echo "stub server: no client" >&2; exit 1
fi
if [ ! -e "$STUB_DIR/refused" ]; then : >"$STUB_DIR/refused"; echo "Couldn't connect to $host:$port" >&2; exit 1; fi
echo "---------------------------------------------------------------------------------------"
case $tool in *_lat) echo "                    RDMA_Write Latency Test" ;; *) echo "                    RDMA_Write BW Test" ;; esac
echo " PCIe relax order: ON"
echo " GID index       : 3"
echo " Mtu             : 4096[B]"
printf ' Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n'
echo "---------------------------------------------------------------------------------------"
case $tool in
  *_lat) echo " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
    printf ' %-7s %-10s    1.50          9.00         2.00    \t       2.10      \t0.10\t\t3.00 \t\t4.00\n' "$size" "$n" ;;
  *) echo " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
    printf ' %-10s %-10s       11000.00              10000.00   \t\t   0.160000\n' "$size" "$n" ;;
esac
echo "---------------------------------------------------------------------------------------"
: >"$STUB_DIR/done.$port"
EOF
chmod +x "$S/bin/rdmabench" "$S/pt/ib_stub"
for o in send write read; do for m in lat bw; do ln -s ib_stub "$S/pt/ib_${o}_$m"; done; done

# stubrun NAME SHELL ARGS...: hw-check.sh under SHELL with the stubs, into $T/NAME
stubrun() {
  local n=$1 sh=$2; shift 2
  rm -f "$S"/log "$S"/count.* "$S"/done.* "$S"/refused
  mkdir -p "$T/$n"
  STUB_DIR=$S REAL_RDMABENCH=$bin PATH="$S/pt:$S/bin:$PATH" $sh "$HWC" --bin "$S/bin/rdmabench" -o "$T/$n" --keep --timeout 20 "$@" \
    >"$T/$n.out" 2>"$T/$n.err"
  rc=$?
  cp "$S/log" "$T/$n.log" 2>/dev/null
  R=$(ls -d "$T/$n"/rdmabench-hw-check-*/ 2>/dev/null | head -n 1)
  R=${R%/}
}
row() { grep -qE "^  $1 *\$" "$T/$2.out" || { echo "     no summary row like '$1' in:"; grep -E '^  [a-z]' "$T/$2.out" | sed 's/^/     /'; return 1; }; }
# order NAME DEV OP MODE: the tools in the order of their runs (rb, pt) for one test
order() {
  grep -E "^(rdmabench loopback -d $2 .*--op $3 --mode $4 |ib_$3_$4 -d $2 .* (127\.0\.0\.1|198\.51\.100\.7)\$)" "$T/$1.log" |
    awk '{ printf "%s ", ($1 == "rdmabench") ? "rb" : "pt" }'
}

shells=()
command -v busybox >/dev/null && shells+=("busybox sh")
command -v dash >/dev/null && shells+=(dash)
shells+=(bash)
full=${shells[0]}
echo "stubs under: ${shells[*]} (the whole fixture under $full)"
stubrun full "$full" --ops write,read --modes lat,bw --lat-sizes 2 --bw-sizes 65536 --lat-iters 1000 --bw-iters 5000
check "stubs: exit 1 (one test failed)" test $rc = 1
check "stubs: prints the report's path" grep -q "^Report: $T/full/rdmabench-hw-check-.*\.tar\.gz" "$T/full.out"
check "stubs: the report is one .tar.gz with summary, results and every run's JSON" eval '
  tgz=$(ls "$T"/full/*.tar.gz) && tar -tzf "$tgz" >"$T/full.list" &&
  grep -q "/summary.txt$" "$T/full.list" && grep -q "/results.tsv$" "$T/full.list" && grep -q "/host.txt$" "$T/full.list" &&
  grep -q "/devices.json$" "$T/full.list" && test "$(grep -c "runs/.*\.rb[0-9]\.json$" "$T/full.list")" = 33'
check "stubs: down, initialising and address-less iWARP ports skipped, with the reason" eval '
  grep -q "^  mlx5_0 port 1: PORT_DOWN (not ACTIVE): skipped" "$T/full.out" &&
  grep -q "^  mlx4_0 port 2: PORT_INIT (not ACTIVE): skipped" "$T/full.out" &&
  grep -q "^  irdma0 port 1: iWARP port without an IPv4 address on ens5: rdma_cm needs one; skipped" "$T/full.out" &&
  ! grep -qE -- "-d (mlx5_0|irdma0) |-d mlx4_0 -i 2" "$T/full.log"'
check "stubs: RoCE: perftest gets rdmabench's GID index (-x 3), over 127.0.0.1" eval '
  grep -q "^ib_write_lat -d mlx5_1 -i 1 -s 2 -n 1000 -p [0-9]* -x 3 127.0.0.1$" "$T/full.log" &&
  grep -q "^ib_read_bw -d mlx5_1 -i 1 -s 65536 -n 5000 -p [0-9]* -t 128 -Q 100 -x 3 127.0.0.1$" "$T/full.log"'
check "stubs: InfiniBand: no -x; the same -i, size and count for both tools" eval '
  grep -q "^ib_write_lat -d mlx4_0 -i 1 -s 2 -n 1000 -p [0-9]* 127.0.0.1$" "$T/full.log" &&
  grep -q "^rdmabench loopback -d mlx4_0 -i 1 --op write --mode lat -s 2 -n 1000 --inline-size perftest --json " "$T/full.log"'
check "stubs: iWARP: rdmabench --rdma-cm, perftest -R on the port's IPv4 address" eval '
  grep -q "^rdmabench loopback -d cxgb4_0 -i 1 --op write --mode bw -s 65536 -n 5000 --inline-size perftest -t 128 -Q 100 --rdma-cm --json " "$T/full.log" &&
  grep -q "^ib_write_bw -d cxgb4_0 -i 1 -s 65536 -n 5000 -p [0-9]* -t 128 -Q 100 -R 198.51.100.7$" "$T/full.log"'
check "stubs: runs alternate rb pt pt rb rb pt" test "$(order full mlx4_0 write bw)" = "rb pt pt rb rb pt "
check "stubs: medians and ratios (lat 1.60/2.00, bw 9100/10000; '!' 10 % worse)" eval '
  row "mlx5_1 +1 write +lat +2 +1\.60 +2\.00 +0\.800" full &&
  row "mlx5_1 +1 write +bw +65536 +9100\.00 +10000\.00 +0\.910" full &&
  row "mlx5_1 +1 read +lat +2 +2\.60 +2\.00 +1\.300 !" full &&
  row "mlx4_0 +1 read +bw +65536 +9100\.00 +10000\.00 +0\.910" full &&
  row "cxgb4_0 +1 write +lat +2 +1\.60 +2\.00 +0\.800" full'
check "stubs: the failed test: 'failed', run twice, its output in failures.txt" eval '
  row "cxgb4_0 +1 read +bw +65536 +failed +10000\.00 +\(failed runs: rdmabench 3, perftest 0\)" full &&
  test "$(grep -c "^rdmabench loopback -d cxgb4_0 .*--op read --mode bw" "$T/full.log")" = 6 &&
  grep -q "stub failure on purpose" "$R/failures.txt" && grep -q "failures: 3 run(s) failed twice" "$T/full.out"'
check "stubs: a client started before its server listened runs again" eval '
  grep -l "client started 2 times" "$R"/runs/*/*.pt1.cmd | grep -q "mlx5_1-p1/write-lat-2.pt1.cmd"'
check "stubs: host and device information in the summary" eval '
  grep -q "^rdmabench: rdmabench 9.9.9 (stub)" "$T/full.out" && grep -q "^perftest: 6.99" "$T/full.out" &&
  grep -q "^  mlx5_1 port 1: PORT_ACTIVE, RoCE (Ethernet), driver mlx5_core, firmware 28.39.1002, link 100.0 Gbps 4X, MTU 4096, netdev ens1f1 198.51.100.2" "$T/full.out" &&
  grep -q "^rdma-core (rdmabench.s view): 50.0" "$T/full.out" &&
  grep -q "^  mlx5_1 port 1: lat: PCIe relax order ON, GID index 3, MTU 4096\[B\], inline 0\[B\], rdma_cm QPs OFF" "$T/full.out"'

for sh in "${shells[@]:1}"; do
  n=${sh// /-}
  stubrun "$n" "$sh" -d mlx5_1,cxgb4_0 --ops write --modes lat,bw --lat-sizes 2 --bw-sizes 4096 -n 100
  check "stubs under $sh: exit 0, -d narrows, ratios" eval '
    test $rc = 0 && row "mlx5_1 +1 write +lat +2 +1\.60 +2\.00 +0\.800" "$n" && row "cxgb4_0 +1 write +bw +4096 +9100\.00 +10000\.00 +0\.910" "$n" &&
    ! grep -q -- "-d mlx4_0" "$T/$n.log" && grep -q "failures: none" "$T/$n.out"'
done

# rdmabench's own perftest links on PATH are not perftest
mkdir -p "$S/links"
for m in lat bw; do ln -sf ../bin/rdmabench "$S/links/ib_write_$m"; done
rm -f "$S"/log "$S"/count.*
mkdir -p "$T/links"
STUB_DIR=$S REAL_RDMABENCH=$bin PATH="$S/links:$PATH" sh "$HWC" --bin "$S/bin/rdmabench" -o "$T/links" -d mlx5_1 --ops write --modes lat \
  --lat-sizes 2 -n 100 >"$T/links.out" 2>&1
rc=$?
check "drop-in links on PATH: not taken for perftest, rdmabench alone" eval '
  test $rc = 0 && grep -q "^perftest: not perftest: ib_write_lat on PATH ($S/links/ib_write_lat) is rdmabench.s drop-in link" "$T/links.out" &&
  row "mlx5_1 +1 write +lat +2 +1\.60" links && ! grep -q "^ib_" "$S/log"'

if ((fails)); then
  echo "hw-check-test: $fails check(s) failed (outputs in $T, kept)"
  trap - EXIT
  exit 1
fi
echo "hw-check-test: all passed"
