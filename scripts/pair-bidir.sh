#!/usr/bin/env bash
# pair-bidir.sh: bidirectional WRITE bandwidth across the two-host bed
# (scripts/vm-pair.sh), rdmabench -b against perftest's ib_write_bw -b, both
# 64 KiB, tx depth 128, CQ moderation 100, ITERS iterations per side and run
# (BIDIR_ITERS, default 800), QP timeout exponent BIDIR_QP_TIMEOUT (default
# 14, perftest's), 4 runs each per round in ABBA BAAB order (BIDIR_ROUNDS
# rounds, default 1; a: servers, b: clients); prints each run with both
# sides' retransmissions (rxe's completer_retry_err) and how busy each
# guest's CPUs were, and the ratio of the medians per round (target >= 0.95),
# then over all rounds.
# Part of 'make bench'.
#
# Across this emulated wire a stall of the host (another guest's vCPU
# scheduled in) longer than the ACK timeout (4.096 us x 2^14 = 67 ms) makes
# rxe retransmit, and every retransmission costs a run a few percent: under
# host load both tools' single runs swing by 2x. Compare on a quiet host.
#
# Iterations, not -D: in iteration mode both tools time the same interval,
# each side from its first post to its last completion. perftest's -D
# samples a window in the middle of the run instead, which leaves out the
# pipeline's fill and drain; across this emulated wire a full send queue
# (128 x 64 KiB) takes ~0.5 s to complete, so the two -D figures time
# different intervals (rdmabench's -D is first post to last completion too).
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
out=${BIDIR_OUT:-$repo/build/pair-bidir}
iters=${BIDIR_ITERS:-800}
qpt=${BIDIR_QP_TIMEOUT:-14}
[[ -x $bin ]] || { echo "pair-bidir: $bin missing (make build)" >&2; exit 2; }
[[ $iters =~ ^[1-9][0-9]*$ ]] || { echo "pair-bidir: BIDIR_ITERS must be a positive integer, got: $iters" >&2; exit 2; }
[[ ${BIDIR_ROUNDS:-1} =~ ^[1-9][0-9]?$ ]] || { echo "pair-bidir: BIDIR_ROUNDS must be 1..99, got: $BIDIR_ROUNDS" >&2; exit 2; }
[[ $qpt =~ ^[0-9]+$ ]] && ((qpt >= 1 && qpt <= 31)) || { echo "pair-bidir: BIDIR_QP_TIMEOUT must be 1..31 (perftest -u), got: $qpt" >&2; exit 2; }
# ABBA BAAB: 4 runs of each tool per round (BIDIR_ROUNDS, default 1)
order=$(for _ in $(seq "${BIDIR_ROUNDS:-1}"); do printf 'pt rb rb pt rb pt pt rb '; done)
rm -rf "$out"
mkdir -p "$out"
pt="ib_write_bw -d rxe2 -x 1 -b -s 65536 -n $iters -t 128 -Q 100 -u $qpt"
rb="--op write --mode bw --size 64K --iters $iters --tx-depth 128 --cq-mod 100 -u $qpt -b --report-both ${BIDIR_RB_FLAGS:-}"
# The guests' payloads (pair-abba-lib.sh): rxe2's counters around each run
# (rdmabench also puts its own deltas in its JSON); both tools pinned to
# CPU 1 with BIDIR_PIN=1 (the default).
. "$dir/pair-abba-lib.sh"
PAIR_PIN=${BIDIR_PIN:-1} pair_abba_payloads "$order" "$pt" "$rb"
"$dir/vm-pair.sh" --siw off --timeout "${BIDIR_TIMEOUT:-1200}" --bin "$bin" --outdir "$out/guests" \
	--a "$pair_a" --b "$pair_b" >"$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
cd "$out/guests/b"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# retransmissions (rxe's completer_retry_err) during run i of tool t, on one guest's side
retries() { join "$1/$2-ctr-$3-0.txt" "$1/$2-ctr-$3-1.txt" 2>/dev/null | awk '$1 == "completer_retry_err" { print $3 - $2; f = 1 } END { if (!f) print "?" }'; }
# the guest's CPUs busy during that run (user, system, irq, softirq), % of all its CPUs
busy() { join "$1/$2-ctr-$3-0.txt" "$1/$2-ctr-$3-1.txt" 2>/dev/null | awk '$1 == "cpu_busy" { b = $3 - $2 } $1 == "cpu_total" { t = $3 - $2 } END { if (t) printf "%.0f%%", 100 * b / t; else print "?" }'; }
sidestats() { echo "retransmissions client $(retries . "$1" "$2"), server $(retries ../a "$1" "$2"); guest CPUs busy client $(busy . "$1" "$2"), server $(busy ../a "$1" "$2")"; }
pts=() rbs=() fails=0
# ratio NAME: the ratio of the medians of rbs and pts, printed with NAME
ratio() {
	if ! ((${#pts[@]} && ${#rbs[@]})); then
		echo "$1: no run of one tool succeeded"
		return
	fi
	local p r v
	p=$(printf '%s\n' "${pts[@]}" | median)
	r=$(printf '%s\n' "${rbs[@]}" | median)
	v=$(awk -v a="$r" -v b="$p" 'BEGIN { printf "%.3f", a / b }')
	echo "$1: rdmabench -b $r MiB/s (${#rbs[@]} runs), ib_write_bw -b $p MiB/s (${#pts[@]} runs); ratio $v (target >= 0.95)" \
		"$(awk -v v="$v" 'BEGIN { print (v >= 0.95) ? "PASS" : "MISS" }')"
}
# each round (4 alternating runs of each tool) has its own medians: a bed that
# slows over its life (both tools do, here) does not mix into one round's ratio
allpts=() allrbs=() round=0
i=0
for who in $order; do
	i=$((i + 1))
	if (((i - 1) % 8 == 0 && i > 1)); then
		round=$((round + 1))
		ratio "round $round"
		allpts+=("${pts[@]}") allrbs+=("${rbs[@]}") pts=() rbs=()
	fi
	if [[ $who == pt ]]; then
		if grep -q '^failed' "pt-$i.txt"; then
			echo "run $i perftest ib_write_bw -b: FAILED: $(grep -m1 -iE 'error|fail' "pt-$i.txt")"
			fails=$((fails + 1))
			continue
		fi
		# the row after the header: #bytes #iterations BW peak BW average MsgRate; -b sums both sides
		read -r bw rate < <(awk '/BW average/ { getline; print $4, $5; exit }' "pt-$i.txt")
		# perftest's MB/sec: 2^20 or 10^6 bytes/s? decide from the message rate
		mib=$(awk -v r="$rate" 'BEGIN { printf "%.4f", r * 1e6 * 65536 / 1048576 }')
		unit=$(awk -v b="$bw" -v m="$mib" 'BEGIN { print (b > 0.9 * m && b < 1.1 * m) ? "MiB" : "MB" }')
		[[ $unit == MiB ]] || bw=$(awk -v b="$bw" 'BEGIN { printf "%.4f", b * 1e6 / 1048576 }')
		pts+=("$bw")
		echo "run $i perftest ib_write_bw -b: $bw MiB/s (both directions; $(sidestats pt $i))"
	else
		if grep -q '^failed' "rb-$i.txt"; then
			echo "run $i rdmabench -b: FAILED: $(grep -m1 '^rdmabench:' "rb-$i.txt")"
			fails=$((fails + 1))
			continue
		fi
		bw=$(jq -r '.results[0].bandwidth.mib_per_s' "rb-$i.json")
		sides=$(jq -r '.results[0].sides | "client \(.client.bandwidth.mib_per_s) + server \(.server.bandwidth.mib_per_s)"' "rb-$i.json" 2>/dev/null || true)
		rbs+=("$bw")
		echo "run $i rdmabench -b: $bw MiB/s (both directions${sides:+: $sides}; $(sidestats rb $i))"
	fi
done
round=$((round + 1))
ratio "round $round"
if ((round > 1)); then
	pts+=("${allpts[@]}") rbs+=("${allrbs[@]}") # all rounds
	ratio "all $round rounds"
fi
echo "$fails runs failed"
