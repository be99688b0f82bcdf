#!/bin/sh
# dropin-perftest.sh: the drop-in against Debian's real perftest, inside the
# SoftRoCE guest (rxe0, 127.0.0.1, GID index 1). For each tool given (default:
# all eight tools), two pairs: perftest's server with the drop-in's
# client, and the drop-in's server with perftest's client. Both ends must exit
# 0 and print a table (READ/atomic servers: the header only, as perftest's),
# with the iteration count asked for. ARGS (-n, -s) go to both ends.
# Usage: dropin-perftest.sh [-j] [-R] [TOOL[@UC|@UD][:pt-srv|:pt-cli]...] [-- ARGS...]
# (-j: the pairs run concurrently, on different ports; -R: both ends with -R,
# rdma_cm QPs on rxe1, 192.0.2.1, as rdma_cm resolves no loopback address;
# TOOL@UC, TOOL@UD: both ends with -c UC or -c UD;
# TOOL:pt-srv runs only perftest's server with the drop-in's client,
# TOOL:pt-cli the other way; --qp: the UC and UD pairs perftest 6.06 allows,
# ib_send_lat, ib_write_lat, ib_send_bw, ib_write_bw with UC, ib_send_lat and
# ib_send_bw with UD). ROWS=N: every client's table has N rows at least (-a:
# 23); PORTS=P: the pairs' ports from P on (the Makefile runs several
# invocations in one guest); TMO=S: each end's time limit (default 60 s);
# DMAX=S: each pair, both ends, done within S seconds (-D runs).
set -u
fail() { echo "dropin-perftest FAIL: $*"; exit 1; }
T=/tmp/ptx
par=0 cm=""
[ "${1:-}" = -j ] && { par=1; shift; }
[ "${1:-}" = -R ] && { cm=-R; shift; }
# the device, GID index and server address of every pair
# (perftest's -R runs its exchange over rdma_cm too: no TCP port to wait for)
if [ -n "$cm" ]; then
  AT="-d rxe1 -R" HOST=192.0.2.1 T=/tmp/ptx-cm base=18850 wait=wait_cm_listen
else
  AT="-d rxe0 -x 1" HOST=127.0.0.1 base=18800 wait=wait_listen
fi
base=${PORTS:-$base}
tools=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --qp) tools="$tools ib_send_lat@UC ib_write_lat@UC ib_send_bw@UC ib_write_bw@UC ib_send_lat@UD ib_send_bw@UD" ;;
    *) tools="$tools $1" ;;
  esac
  shift
done
[ "${1:-}" = -- ] && shift
[ -n "$tools" ] || tools="ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw"
[ $# -gt 0 ] || set -- -n 300
mkdir -p $T/bin
rm -f $T/*.fail $T/*.txt $T/*.err # an earlier invocation's (the Makefile runs several)
for item in $tools; do t=${item%%:*}; ln -sf "$(command -v rdmabench)" $T/bin/${t%%@*}; done

. "$(dirname "$0")/dropin-lib.sh" # wait_listen, wait_cm_listen

# pair NAME PORT SERVER CLIENT ARGS...
pair() {
  name=$1 port=$2 srv=$3 cli=$4; shift 4
  t0=$(date +%s)
  timeout ${TMO:-60} $srv $AT -p "$port" "$@" >$T/$name.server.txt 2>$T/$name.server.err &
  spid=$!
  $wait "$port" || { echo "$name: no server on $port" >$T/$name.fail; return; }
  timeout ${TMO:-60} $cli $AT -p "$port" "$@" $HOST >$T/$name.client.txt 2>$T/$name.client.err
  crc=$?
  wait $spid
  src=$?
  [ $crc = 0 ] && [ $src = 0 ] || { echo "$name: client exit $crc, server exit $src" >$T/$name.fail; return; }
  took=$(( $(date +%s) - t0 ))
  echo "$name${cm:+ $cm}: both ends exit 0 ($took s)"
  # DMAX=S (-D runs): the pair, both ends, within S seconds
  [ -z "${DMAX:-}" ] || [ "$took" -le "$DMAX" ] || echo "$name: took $took s, more than DMAX=$DMAX" >$T/$name.fail
}

port=$base pids=""
for item in $tools; do
  t=${item%%:*} dirs="pt-srv pt-cli" qp="" name=""
  case $item in *:*) dirs=${item#*:} ;; esac
  case $t in *@*) qp=${t#*@} t=${t%%@*} ;; esac
  for d in $dirs; do
    if [ $d = pt-srv ]; then srv=$t cli=$T/bin/$t; else srv=$T/bin/$t cli=$t; fi
    name=$t${qp:+.$qp}.$d
    if [ $par = 1 ]; then pair "$name" $port $srv $cli ${qp:+-c $qp} "$@" & pids="$pids $!"; else pair "$name" $port $srv $cli ${qp:+-c $qp} "$@"; fi
    port=$((port + 1))
  done
done
[ -n "$pids" ] && wait $pids
bad=0
for f in $T/*.fail; do
  [ -e "$f" ] || continue
  bad=1; cat "$f"; n=${f%.fail}; n=${n##*/}
  for s in server client; do echo "--- $n $s:"; cat $T/$n.$s.txt $T/$n.$s.err; done
done
[ $bad = 0 ] || fail "see above"
# every timed side printed a table row; READ/atomic servers the header only
for f in $T/*.client.txt $T/*.server.txt; do
  case $f in *read_lat*.server.txt | *atomic_lat*.server.txt) continue ;; esac
  awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { ok = 1 } END { exit !ok }' $f || { cat $f; fail "$f: no table row"; }
done
if [ -n "${ROWS:-}" ]; then # -a: one row per size on the clients
  for f in $T/*.client.txt; do
    n=$(awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' $f)
    [ "$n" -ge "$ROWS" ] || { cat $f; fail "$f: $n table rows, want $ROWS"; }
  done
fi
# -D in a latency tool: every timed side prints perftest's duration table
# (#iterations, t_avg, tps average; no percentiles), more than 0 iterations
case " $* " in *" -D "*)
  for f in $T/*_lat*.client.txt $T/*_lat*.server.txt; do
    [ -e "$f" ] || continue
    case $f in *read_lat*.server.txt | *atomic_lat*.server.txt) continue ;; esac
    awk '/^ #bytes +#iterations +t_avg\[usec\] +tps average$/ { h = 1; next } h && $1 ~ /^[0-9]+$/ && $2 > 0 { ok = 1 } END { exit !ok }' $f ||
      { cat $f; fail "$f: no -D latency table (#iterations t_avg tps average)"; }
  done ;;
esac
echo "dropin-perftest${cm:+ $cm}${*:+ $*}: OK"
