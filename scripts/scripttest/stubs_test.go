package scripttest

// The stub tools of the hw-check tests, written into each test's
// temporary directory with testdata/hwcheck-devices.json (a fixture of five
// devices: a down port sorting first, RoCE, a two-port InfiniBand device,
// iWARP with and without an IPv4 address).

// stubRdmabench answers --version, devices (the fixture; --tsv by the real
// binary), report and import (the real binary: its JSON reader and
// perftest parser), and loopback, writing a result document whose p50 and
// bandwidth cycle over 3 values per test (medians 1.6 us, 9100 MiB/s; read
// lat on mlx5_1 1 us slower); read bw on cxgb4_0 fails.
const stubRdmabench = `#!/bin/sh
echo "rdmabench $*" >>"$STUB_DIR/log"
case $1 in
  --version) echo "rdmabench 9.9.9 (stub)"; exit 0 ;;
  devices) case ${2:-} in --json) cat "$STUB_DIR/devices.json" ;; --tsv) exec "$REAL_RDMABENCH" "$@" ;; *) echo "(stub devices)" ;; esac; exit 0 ;;
  report) exec "$REAL_RDMABENCH" "$@" ;; # the real reader of its JSON (report --tsv)
  loopback) shift ;;
  import) exec "$REAL_RDMABENCH" "$@" ;; # the real parser of perftest's output
  accept) echo "Node acceptance of stub: bandwidth >= 90%"; echo "node: FAIL (fail: mlx5_1)"; exit 11 ;;
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
  "tool": "rdmabench",
  "role": "loopback",
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
      "iterations": 1000,
      "latency_ns": {
        "count": 1000,
        "min": 1000,
        "mean": 1700,
        "p50": $p50,
        "p99": 3000,
        "max": 5000
      },
      "rtt_ns": {
        "count": 1000,
        "min": 1000,
        "mean": 9999999,
        "p50": 9999999,
        "p99": 9999999,
        "max": 9999999
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
`

// stubPerftest is every ib_* tool (links to it): the server waits for its
// client (at most 5 s); the first client of the whole test is refused, as
// if its server were not listening yet; t_typical 2.00 us, BW average
// 10000 MB/sec.
const stubPerftest = `#!/bin/sh
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
`
