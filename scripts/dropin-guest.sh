#!/bin/sh
# dropin-guest.sh: the perftest drop-in stage of make test, inside the SoftRoCE
# guest (called by scripts/guest-test.sh; needs rdmabench and perftest's
# ib_send_lat and ib_write_bw). Links named ib_send_lat and ib_write_bw to
# rdmabench run as perftest's server and client on rxe0 (127.0.0.1, GID 1);
# their output must parse with rdmabench's perftest parser (rdmabench import
# perftest) and have perftest's layout (ib_send_lat: what perftest's own ib_send_lat
# prints in this guest; ib_write_bw: what perftest 6.06 printed here): the
# same header box labels in the same order, the same table header line, the
# same number of columns, and the same depths, MTU, GID index and inline size.
# Exit 0 when all holds; 1 with the reason otherwise.
set -u
fail() { echo "dropin-guest FAIL: $*"; exit 1; }
T=/tmp/pt
mkdir -p $T/bin
for t in ib_send_lat ib_write_bw; do ln -sf "$(command -v rdmabench)" $T/bin/$t; done

# perftest's output is read by rdmabench's one parser (rdmabench import perftest,
# bench/perftest/parse.go), the same the other scripts use. parsed FILE...: one call
# for all (a process start costs under TCG), 10 lines per file: 1 the first result
# row, 2 the number of table headers, 3 the table header as printed, 4-9 the settings
# below (their first word; "" when absent), 10 the box's title and labels
parsed() {

  for l in row tables table-header 'setting:TX depth' 'setting:RX depth' 'setting:CQ Moderation' 'setting:Mtu' \
    'setting:GID index' 'setting:Max inline data' labels; do set -- "$@" --show "$l"; done
  rdmabench import perftest "$@" 2>/dev/null
}
# item K I: line I of file K's 10 (K from 0) in $T/parsed
item() { sed -n "$(($1 * 10 + $2))p" $T/parsed; }

# wait_listen PORT: until something listens on TCP PORT (at most 15 s)
wait_listen() {
  hex=$(printf '%04X' "$1") i=0
  while [ $i -lt 150 ]; do
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

# pair NAME PORT TOOL ARGS...: TOOL's server, then its client, on rxe0
pair() {
  pt0=$(date +%s)
  name=$1 port=$2 tool=$3; shift 3
  timeout 60 $tool -d rxe0 -x 1 -p "$port" "$@" >$T/$name.server.txt 2>$T/$name.server.err &
  spid=$!
  wait_listen "$port" || fail "$name: no server listening on port $port"
  timeout 60 $tool -d rxe0 -x 1 -p "$port" "$@" 127.0.0.1 >$T/$name.client.txt 2>$T/$name.client.err
  crc=$?
  wait $spid
  src=$?
  [ $crc = 0 ] && [ $src = 0 ] || { cat $T/$name.*; fail "$name: client exit $crc, server exit $src"; }
  echo "$name: $(( $(date +%s) - pt0 )) s"
}

# check NAME REAL COLS SIZE ITERS: the drop-in's outputs (both sides) against
# perftest's REAL ones
check() {
  name=$1 real=$2 cols=$3 size=$4 iters=$5
  parsed $T/$name.client.txt $T/$name.server.txt $T/$real.client.txt $T/$real.server.txt >$T/parsed
  k=0
  for side in client server; do
    f=$T/$name.$side.txt r=$T/$real.$side.txt w=$((k + 2))
    row=$(item $k 1)
    set -- $row
    [ $# = "$cols" ] || { cat $f; fail "$name $side: $# columns in '$row', want $cols"; }
    [ "$1" = "$size" ] && [ "$2" = "$iters" ] || fail "$name $side: row '$row' is not $size B, $iters iterations"
    for v in $row; do
      case $v in *[!0-9.]* | '' | .*) fail "$name $side: '$v' in '$row' is not a number" ;; esac
    done
    [ "$(item $k 2)" = 1 ] || fail "$name $side: not one table header"
    [ "$(item $k 3)" = "$(item $w 3)" ] || { cat $f $r; fail "$name $side: table header differs from perftest's"; }
    [ -n "$(item $w 10)" ] || fail "$real $side: no header box in perftest's output"
    [ "$(item $k 10)" = "$(item $w 10)" ] || fail "$name $side: header box labels differ from perftest's: $(item $k 10); perftest's: $(item $w 10)"
    i=4
    for l in 'TX depth' 'RX depth' 'CQ Moderation' 'Mtu' 'GID index' 'Max inline data'; do
      [ "$(item $k $i)" = "$(item $w $i)" ] || fail "$name $side: '$l' $(item $k $i), perftest's $(item $w $i)"
      i=$((i + 1))
    done
    k=$((k + 1))
  done
  echo "$name: client and server parse ($(item 0 1)), layout as $real"
}

# one pair at a time: both ends busy-poll, and the guest has 2 vCPUs; perftest's
# own ib_send_lat in this guest is the reference for the layout
pair lat-real 18741 ib_send_lat -n 200
pair lat 18742 $T/bin/ib_send_lat -n 200
pair bw 18744 $T/bin/ib_write_bw -n 200 -s 4096
check lat lat-real 9 2 200
# ib_write_bw against what perftest 6.06 printed in this guest for the same
# command (bench/perftest/testdata/perftest-6.06 has the whole outputs; the
# host tests compare the drop-in with them byte for byte): a real pair here
# would add ~5-10 s to make test
for side in client server; do
  {
    echo '---------------------------------------------------------------------------------------'
    echo '                    RDMA_Write BW Test'
    printf ' Dual-port       : OFF\t\tDevice         : rxe0\n Number of qps   : 1\t\tTransport type : IB\n'
    printf ' Connection type : RC\t\tUsing SRQ      : OFF\n PCIe relax order: ON\n ibv_wr* API     : OFF\n'
    [ $side = client ] && echo ' TX depth        : 128'
    printf ' CQ Moderation   : 100\n Mtu             : 4096[B]\n Link type       : Ethernet\n GID index       : 1\n'
    printf ' Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n'
    echo '---------------------------------------------------------------------------------------'
    echo ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
    echo ' 4096       200              0.00               8.00   		   0.002000'
    echo '---------------------------------------------------------------------------------------'
  } >$T/bw-real.$side.txt
done
check bw bw-real 5 4096 200
# a flag the drop-in cannot honour: exit 2, naming it, before anything runs
$T/bin/ib_send_lat -U 127.0.0.1 >$T/u.txt 2>&1
rc=$?
[ $rc = 2 ] && grep -q -- '-U: not supported' $T/u.txt || { cat $T/u.txt; fail "ib_send_lat -U: exit $rc"; }
echo "dropin-guest: OK"
