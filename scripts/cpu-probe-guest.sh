#!/bin/sh
# cpu-probe-guest.sh: where each side's CPU goes during a 64 KiB RDMA WRITE
# bandwidth test over rxe0, rdmabench (server + run) against perftest's
# ib_write_bw, in ONE SoftRoCE guest (scripts/vm-run.sh): per thread of both
# processes, the CPU time (schedstat), time slices, voluntary and
# involuntary context switches and the syscall it sits in (35 nanosleep:
# Go's sysmon; 202 futex; 281 epoll_pwait: the netpoller; 7 poll: the
# async-event watcher), over a window inside the timed phase; both guest
# CPUs' busy time; the busiest threads of the whole guest; and rxe0's
# counters per run. The clients run on CPU 1 (busybox taskset), as in
# scripts/pair-wire-bw.sh. Under TCG, wall-clock percentages run over 100;
# compare the counts. Knobs: D (test seconds, 10), A and B (the window,
# 3-8 s), ORDER (e.g. "rb pt rb"), RBFLAGS, RBENV (e.g. GOMAXPROCS=1).
#   scripts/vm-run.sh --bin build/rdmabench --file scripts/cpu-probe-guest.sh -- sh /work/cpu-probe-guest.sh
D=${D:-10}
A=${A:-3}   # first sample, seconds after the client starts
B=${B:-8}   # second sample
ORDER=${ORDER:-"rb pt rb"}
snap() { # PID: tid runtime_ns timeslices vol nonvol syscall
	grep -H . /proc/$1/task/*/schedstat 2>/dev/null | sed 's,^/proc/[0-9]*/task/\([0-9]*\)/schedstat:,\1 ,' >/tmp/snap.a
	grep -H ctxt_switches /proc/$1/task/*/status 2>/dev/null | sed 's,^/proc/[0-9]*/task/\([0-9]*\)/status:,\1 ,' >/tmp/snap.b
	grep -H . /proc/$1/task/*/syscall 2>/dev/null | sed 's,^/proc/[0-9]*/task/\([0-9]*\)/syscall:,\1 ,' >/tmp/snap.c
	awk 'FILENAME=="/tmp/snap.b" { if ($2 ~ /^voluntary/) v[$1]=$3; else n[$1]=$3; next } FILENAME=="/tmp/snap.c" { sc[$1]=$2; next } { r[$1]=$2; sl[$1]=$4 } END { for (t in r) print t, r[t], sl[t], v[t]+0, n[t]+0, sc[t] }' /tmp/snap.b /tmp/snap.c /tmp/snap.a
}
allsnap() { grep -H . /proc/[0-9]*/task/*/schedstat 2>/dev/null | sed 's,^/proc/[0-9]*/task/\([0-9]*\)/schedstat:,\1 ,' >/tmp/all.a; grep -H . /proc/[0-9]*/task/*/comm 2>/dev/null | sed 's,^/proc/[0-9]*/task/\([0-9]*\)/comm:,\1 ,' >/tmp/all.b; awk 'NR==FNR { c[$1]=$2; next } { print $1, $2, c[$1] }' /tmp/all.b /tmp/all.a; }
alldiff() { awk -v T="$3" 'NR==FNR { r[$1]=$2; next } { d=$2-r[$1]; if (d > 4000000) printf "%.1f %s %s\n", d/1e7/T, $1, $3 }' "$1" "$2" | sort -rn | head -12 | sed 's/^/  top: /'; }
ctr() { for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do echo $(basename $f) $(cat $f); done; }
ctrdiff() { awk 'NR==FNR { c[$1]=$2; next } $2 != c[$1] { printf " %s +%d", $1, $2-c[$1] } END { print "" }' "$1" "$2" | sed 's/^/  rxe0:/'; }
cpus() { grep '^cpu[0-9]' /proc/stat | awk '{ print $1, $2+$3+$4+$7+$8, $7, $8 }'; }
diffsnap() { # label a b secs
	awk -v L="$1" -v T="$4" 'NR==FNR { r[$1]=$2; sl[$1]=$3; v[$1]=$4; n[$1]=$5; next }
	{ dr=$2-r[$1]; if (!($1 in r)) dr=$2; tot+=dr
	  if (dr > 300000) printf "  %s tid %s: %.1f%% cpu, %d slices, vol %d nonvol %d, in syscall %s\n", L, $1, dr/1e7/T, $3-sl[$1], $4-v[$1], $5-n[$1], $6 }
	END { printf "  %s total: %.1f%% of one cpu (%d threads)\n", L, tot/1e7/T, FNR }' "$2" "$3"
}
cpudiff() { awk -v T="$3" 'NR==FNR { b[$1]=$2; si[$1]=$3; ss[$1]=$4; next } { printf "  guest %s busy %.1f%% (irq+softirq %.1f%%)\n", $1, ($2-b[$1])/T, ($3-si[$1]+$4-ss[$1])/T }' "$1" "$2"; }
window() { # label spid cpid
	sleep $A
	snap $2 >/tmp/s0; snap $3 >/tmp/c0; cpus >/tmp/g0; allsnap >/tmp/a0
	sleep $((B - A))
	snap $2 >/tmp/s1; snap $3 >/tmp/c1; cpus >/tmp/g1; allsnap >/tmp/a1
	echo "== $1: window ${A}-${B}s"
	diffsnap server /tmp/s0 /tmp/s1 $((B - A))
	diffsnap client /tmp/c0 /tmp/c1 $((B - A))
	cpudiff /tmp/g0 /tmp/g1 $((B - A))
	alldiff /tmp/a0 /tmp/a1 $((B - A))
}
PT="-d rxe0 -x 1 -s 65536 -D $D -t 128 -Q 1 -u 14"
RB="--op write --mode bw --size 64K -D $D -t 128 -Q 1 -u 14 ${RBFLAGS:-}"
for who in $ORDER; do
	ctr >/tmp/k0
	case $who in
	pt)
		ib_write_bw $PT >/tmp/pts.txt 2>&1 &
		spid=$!
		wait-listen 18515 30
		busybox taskset -c 1 ib_write_bw $PT 127.0.0.1 >/tmp/ptc.txt 2>&1 &
		cpid=$!
		window pt $spid $cpid
		wait $cpid; wait $spid
		grep -E '^ *65536' /tmp/ptc.txt; ctr >/tmp/k1; ctrdiff /tmp/k0 /tmp/k1
		;;
	rb*)
		env ${RBENV:-X=1} rdmabench server -d rxe0 -x 1 -p 18600 >/tmp/rbs.txt 2>&1 &
		spid=$!
		wait-listen 18600 30
		sleep 1
		snap $spid >/tmp/i0; sleep 2; snap $spid >/tmp/i1
		echo "== rb server idle 2s"; diffsnap idle /tmp/i0 /tmp/i1 2
		env ${RBENV:-X=1} busybox taskset -c 1 rdmabench run 127.0.0.1 -p 18600 -d rxe0 -x 1 $RB --json /tmp/rb.json >/tmp/rbc.txt 2>&1 &
		cpid=$!
		window $who $spid $cpid
		wait $cpid || cat /tmp/rbc.txt
		grep -E 'MiB|write' /tmp/rbc.txt | head -5; ctr >/tmp/k1; ctrdiff /tmp/k0 /tmp/k1
		kill $spid; wait $spid
		;;
	esac
done
