#!/bin/sh
# dropin-perftest-agree.sh: the drop-in's figures against perftest's, in the
# guest (docs/perftest.md, "Agreement"): for each tool, ROUNDS alternating
# runs of perftest's server with perftest's client and with the drop-in's
# client (same arguments), then the median of each side's column: t_typical
# (latency) or BW average (bandwidth), and their ratio drop-in/perftest.
# Usage: dropin-perftest-agree.sh ROUNDS TOOL ARGS...
set -u
rounds=$1 tool=$2; shift 2
T=/tmp/agree; mkdir -p $T/bin; ln -sf "$(command -v rdmabench)" $T/bin/$tool
. "$(dirname "$0")/dropin-lib.sh" # wait_listen
col=5; case $tool in *_bw) col=4 ;; esac
one() { # one CLIENT: prints the client's figure
  timeout 120 $tool -d rxe0 -x 1 -p 18990 "$@" >$T/srv.txt 2>&1 & s=$!
  wait_listen 18990 || return 1
  timeout 120 $cli -d rxe0 -x 1 -p 18990 "$@" 127.0.0.1 >$T/cli.txt 2>&1 || return 1
  wait $s || return 1
  awk -v c=$col '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $c; exit }' $T/cli.txt
}
: >$T/pt; : >$T/rb
r=0
while [ $r -lt $rounds ]; do
  cli=$tool; one "$@" >>$T/pt || { cat $T/*.txt; exit 1; }
  cli=$T/bin/$tool; one "$@" >>$T/rb || { cat $T/*.txt; exit 1; }
  r=$((r + 1))
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pt=$(med $T/pt) rb=$(med $T/rb)
echo "$tool $*: perftest client $(tr '\n' ' ' <$T/pt)-> median $pt; drop-in client $(tr '\n' ' ' <$T/rb)-> median $rb; ratio $(awk -v a=$rb -v b=$pt 'BEGIN { printf "%.3f", a / b }')"
