#!/usr/bin/env bash
# pair-wire-bw.sh: unidirectional 64 KiB WRITE bandwidth across the two-host
# bed (scripts/vm-pair.sh), rdmabench against perftest's ib_write_bw, in
# WIRE_ROUNDS rounds (default 4) of 8 alternating runs, ABBA BAAB (a: the
# servers, b: the clients). Each run: WIRE_ITERS iterations (default 2000),
# tx depth 128, CQ moderation WIRE_CQ_MOD (default 1: both tools' default
# above 8 KiB), QP timeout exponent WIRE_QP_TIMEOUT (default 14, perftest's).
# scripts/wirebw (Go) prints every run with both sides' retransmissions and
# how busy each guest was, the ratio of the medians (rdmabench over
# perftest) per round and over all rounds, and its 95 % bootstrap interval
# (target >= 0.97). Part of 'make bench'; on its own: make bench-wire.
#
# The host's load decides much here (see pair-bidir.sh): the script prints
# uptime before and after. Iterations, not -D: both tools then time the same
# interval, first post to last completion.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
out=${WIRE_OUT:-$repo/build/pair-wire-bw}
iters=${WIRE_ITERS:-2000}
rounds=${WIRE_ROUNDS:-4}
cqmod=${WIRE_CQ_MOD:-1}
qpt=${WIRE_QP_TIMEOUT:-14}
[[ -x $bin ]] || { echo "pair-wire-bw: $bin missing (make build)" >&2; exit 2; }
[[ $iters =~ ^[1-9][0-9]*$ ]] || { echo "pair-wire-bw: WIRE_ITERS must be a positive integer, got: $iters" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "pair-wire-bw: WIRE_ROUNDS must be 1..99, got: $rounds" >&2; exit 2; }
[[ $cqmod =~ ^[0-9]+$ ]] && ((cqmod >= 1 && cqmod <= 128)) || { echo "pair-wire-bw: WIRE_CQ_MOD must be 1..128 (the tx depth), got: $cqmod" >&2; exit 2; }
[[ $qpt =~ ^[0-9]+$ ]] && ((qpt >= 1 && qpt <= 31)) || { echo "pair-wire-bw: WIRE_QP_TIMEOUT must be 1..31 (perftest -u), got: $qpt" >&2; exit 2; }
order=$(for _ in $(seq "$rounds"); do printf 'pt rb rb pt rb pt pt rb '; done)
rm -rf "$out"
mkdir -p "$out"
echo "host load before: $(uptime)"
pt="ib_write_bw -d rxe2 -x 1 -s 65536 -n $iters -t 128 -Q $cqmod -u $qpt"
rb="--op write --mode bw --size 64K --iters $iters --tx-depth 128 --cq-mod $cqmod -u $qpt ${WIRE_RB_FLAGS:-}"
# ctr: rxe2's hw_counters and the guest's CPU time (for wirebw). Both tools'
# busy-polling thread on CPU 1, virtio's interrupts on CPU 0 (pair-bidir.sh
# says why).
prelude="ctr() {
  for f in /sys/class/infiniband/rxe2/ports/1/hw_counters/*; do echo \$(basename \$f) \$(cat \$f); done
  head -1 /proc/stat | awk '{ print \"cpu_busy\", \$2 + \$3 + \$4 + \$7 + \$8; print \"cpu_total\", \$2 + \$3 + \$4 + \$5 + \$6 + \$7 + \$8 }'
}
for q in \$(grep virtio /proc/interrupts | cut -d: -f1); do echo 1 >/proc/irq/\$q/smp_affinity 2>/dev/null; done
pin='busybox taskset -c 1'; rbpin='--cpu 1'"
"$dir/vm-pair.sh" --siw off --timeout "${WIRE_TIMEOUT:-1800}" --bin "$bin" --outdir "$out/guests" \
	--a "$prelude
rdmabench server --bind 198.51.100.1 -p 18600 \$rbpin >/out/server.log 2>&1 &
i=0
for who in $order; do
  i=\$((i + 1))
  if [ \$who = rb ]; then
    pair-wait rb-\$i 600 || exit 1; ctr >/out/rb-ctr-\$i-0.txt; pair-signal rb-ready-\$i
    pair-wait rb-end-\$i 900 || exit 1; ctr >/out/rb-ctr-\$i-1.txt; pair-signal rb-ended-\$i
    continue
  fi
  pair-wait want-\$i 600 || exit 1
  ctr >/out/pt-ctr-\$i-0.txt
  \$pin $pt >/out/pt-server-\$i.txt 2>&1 &
  p=\$!
  wait-listen 18515 60 && pair-signal up-\$i
  wait \$p
  ctr >/out/pt-ctr-\$i-1.txt
done
pair-wait done 900" \
	--b "$prelude
i=0
for who in $order; do
  i=\$((i + 1))
  if [ \$who = pt ]; then
    pair-signal want-\$i; pair-wait up-\$i 120 || exit 1
    ctr >/out/pt-ctr-\$i-0.txt
    \$pin $pt 198.51.100.1 >/out/pt-\$i.txt 2>&1 || echo failed >>/out/pt-\$i.txt
    ctr >/out/pt-ctr-\$i-1.txt
  else
    pair-signal rb-\$i; pair-wait rb-ready-\$i 120 || exit 1
    ctr >/out/rb-ctr-\$i-0.txt
    rdmabench run 198.51.100.1 -p 18600 $rb \$rbpin --json /out/rb-\$i.json >/out/rb-\$i.txt 2>&1 || echo failed >>/out/rb-\$i.txt
    ctr >/out/rb-ctr-\$i-1.txt
    pair-signal rb-end-\$i; pair-wait rb-ended-\$i 120 || exit 1
  fi
done
pair-signal done" >"$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
echo "host load after: $(uptime)"
cd "$repo" && go run ./scripts/wirebw -dir "$out/guests" -order "$order"
