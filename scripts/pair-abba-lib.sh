# pair-abba-lib.sh: the two guests' payloads of an alternating comparison
# across the two-host bed (scripts/vm-pair.sh), rdmabench against one
# perftest tool; sourced by pair-bidir.sh and pair-wire-bw.sh.
#
# pair_abba_payloads ORDER PT RB [RBPIN]: sets pair_a (the servers) and
# pair_b (the clients). ORDER lists the runs, pt or rb each; PT is the
# perftest command line (the client adds the server's address), RB
# rdmabench run's flags. With RBPIN=1 rdmabench's whole process (server
# and client) runs on CPU 1 as perftest's does, not only its engine thread
# (--cpu 1): its other threads (Go's runtime, the sample drainer, the
# heartbeats) then stay off CPU 0, where rxe's receive path and virtio's
# interrupts run.
# Both tools' servers run once per run and exit when it ends (rdmabench
# server --once, as perftest's server does): while a run goes, neither
# guest polls anything. (Until 2026-12-01 rdmabench's one long-lived server
# guest polled the client's flag server every 0.5 s to learn a run had
# ended, across the same wire, during rdmabench's runs only: that cost
# rdmabench 10-15 % of its wire bandwidth, docs/testbed.md.)
# Around each run both guests dump rxe2's hw_counters and their CPU time to
# /out/<tool>-ctr-<i>-<0|1>.txt; b writes /out/pt-<i>.txt, /out/rb-<i>.txt
# and /out/rb-<i>.json, and a line "failed" when the tool failed. Both
# tools' busy-polling thread runs on CPU 1 and virtio's interrupts on CPU 0
# unless PAIR_PIN=0: unpinned, a poller that lands on the CPU taking
# virtio-net's interrupts starves rxe's receive path, and single runs of
# either tool swing by 2x across this wire.
pair_abba_payloads() {
	local order=$1 pt=$2 rb=$3 rbwrap='' rbcpu='$rbpin'
	# taskset leaves rdmabench one CPU, which --cpu 1 would then refuse
	[ "${4:-0}" = 1 ] && rbwrap='$pin ' rbcpu=''
	# the sampler: every 0.5 s the run going on (/tmp/tag), both CPUs'
	# /proc/stat fields and rxe2's packet counters, to /out/samples.txt
	# (scripts/wirebw/steady.go reads it); shell builtins only, on CPU 1
	local sampler='echo idle >/tmp/tag
sampler() {
  while :; do
    read up _ </proc/uptime; read tag </tmp/tag
    while read n u ni s id io irq sirq rest; do
      case $n in cpu0) c0="$u $ni $s $id $io $irq $sirq";; cpu1) c1="$u $ni $s $id $io $irq $sirq";; esac
    done </proc/stat
    read tx </sys/class/infiniband/rxe2/ports/1/hw_counters/sent_pkts
    read rx </sys/class/infiniband/rxe2/ports/1/hw_counters/rcvd_pkts
    echo "$up $tag | $c0 | $c1 | $tx $rx"
    sleep 0.5
  done
}
sampler >/out/samples.txt 2>&1 &
busybox taskset -p -c 1 $! >/dev/null 2>&1
'
	local prelude="${sampler}ctr() {
  for f in /sys/class/infiniband/rxe2/ports/1/hw_counters/*; do echo \$(basename \$f) \$(cat \$f); done
  head -1 /proc/stat | awk '{ print \"cpu_busy\", \$2 + \$3 + \$4 + \$7 + \$8; print \"cpu_total\", \$2 + \$3 + \$4 + \$5 + \$6 + \$7 + \$8 }'
}
pin=''
if [ ${PAIR_PIN:-1} = 1 ]; then
  for q in \$(grep virtio /proc/interrupts | cut -d: -f1); do echo 1 >/proc/irq/\$q/smp_affinity 2>/dev/null; done
  pin='busybox taskset -c 1'; rbpin='--cpu 1'
fi"
	pair_a="$prelude
i=0
for who in $order; do
  i=\$((i + 1))
  if [ \$who = rb ]; then
    pair-wait rb-\$i 600 || exit 1; ctr >/out/rb-ctr-\$i-0.txt; echo rb-\$i >/tmp/tag
    ${rbwrap}rdmabench server --bind 198.51.100.1 -p 18600 --once $rbcpu >>/out/server.log 2>&1 &
    p=\$!
    wait-listen 18600 60 && pair-signal rb-ready-\$i
    wait \$p || echo \"server of run \$i failed\" >>/out/server.log
    echo idle >/tmp/tag; ctr >/out/rb-ctr-\$i-1.txt
    continue
  fi
  pair-wait want-\$i 600 || exit 1
  ctr >/out/pt-ctr-\$i-0.txt; echo pt-\$i >/tmp/tag
  \$pin $pt >/out/pt-server-\$i.txt 2>&1 &
  p=\$!
  wait-listen 18515 60 && pair-signal up-\$i
  wait \$p
  echo idle >/tmp/tag; ctr >/out/pt-ctr-\$i-1.txt
done
pair-wait done 900"
	pair_b="$prelude
i=0
for who in $order; do
  i=\$((i + 1))
  if [ \$who = pt ]; then
    pair-signal want-\$i; pair-wait up-\$i 120 || exit 1
    ctr >/out/pt-ctr-\$i-0.txt; echo pt-\$i >/tmp/tag
    \$pin $pt 198.51.100.1 >/out/pt-\$i.txt 2>&1 || echo failed >>/out/pt-\$i.txt
    echo idle >/tmp/tag; ctr >/out/pt-ctr-\$i-1.txt
  else
    pair-signal rb-\$i; pair-wait rb-ready-\$i 120 || exit 1
    ctr >/out/rb-ctr-\$i-0.txt; echo rb-\$i >/tmp/tag
    ${rbwrap}rdmabench run 198.51.100.1 -p 18600 $rb $rbcpu --json /out/rb-\$i.json >/out/rb-\$i.txt 2>&1 || echo failed >>/out/rb-\$i.txt
    echo idle >/tmp/tag; ctr >/out/rb-ctr-\$i-1.txt
  fi
done
pair-signal done"
}
