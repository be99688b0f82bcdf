#!/usr/bin/env bash
# pair-timeline.sh: make pair-timeline (docs/testbed.md, "Counter timelines on a
# lossy wire"). Two SoftRoCE guests on a wire (scripts/vm-pair.sh): a serves; b runs
# a 4 KiB WRITE bandwidth test for DUR seconds with 1 s intervals (its completion
# latency, one signaled completion per message: a latency test across this emulated
# wire makes too few round trips per second for an interval's p99) and, from LOSS_AT to
# LOSS_AT + LOSS_FOR seconds into the test, drops LOSS of its eth0 packets (netem).
# Then, on the host, TestTimelineWire (bench/timeline) reads the JSON and the .hlog
# (where the test started in the run): the intervals during the loss where p99 rose
# carry retransmission counters (rxe's completer_retry_err, duplicate_request,
# out_of_seq_request, rcvd_seq_err, ...), and the timeline plot is drawn. Output in build/pair-timeline/. Not part of make test (about 2 minutes).
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
GO=${GO:-go}
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
out=${PAIR_OUT:-$repo/build/pair-timeline}
dur=${DUR:-12} loss=${LOSS:-3%} loss_at=${LOSS_AT:-5} loss_for=${LOSS_FOR:-3}
((loss_at >= 1)) || { echo "pair-timeline: LOSS_AT must be at least 1 (s into the test)" >&2; exit 2; }
[[ -x $bin ]] || { echo "pair-timeline: $bin missing (make build)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
# b's payload: the run in the background, the loss switched on and off beside it;
# the times (ms into the test, from /proc/uptime) go to /out/loss.txt
read -r -d '' b_script <<EOF || :
ms() { awk '{ printf "%d\n", \$1 * 1000 }' /proc/uptime; }
pair-wait up 120 || exit 1
rdmabench run 198.51.100.1 --op write --mode bw --size 4K --cq-mod 1 -D ${dur}s --interval 1s --json /out/timeline.json \
	--hlog /out/timeline.hlog >/out/run.txt 2>&1 &
pid=\$!
# the test's first interval line (1 s into the test; connecting and the warm-up take
# seconds under load): the loss starts LOSS_AT seconds into the test
i=0
until grep -q '^\[ *0\.00-' /out/run.txt 2>/dev/null; do
	i=\$((i + 1)); [ \$i -lt 600 ] && kill -0 \$pid 2>/dev/null || { cat /out/run.txt; exit 1; }
	sleep 0.1
done
first=\$((\$(ms) - 1000)) # the test's start, within 0.1 s (+ the line's own lag)
sleep $((loss_at - 1))
tc qdisc add dev eth0 root netem loss $loss || exit 1
on=\$((\$(ms) - first))
sleep $loss_for
tc qdisc del dev eth0 root
off=\$((\$(ms) - first))
wait \$pid; rc=\$?
echo "loss $loss on eth0 of b from \$on ms to \$off ms into the test (rdmabench exit \$rc)"
echo "\$on,\$off" >/out/loss.txt
tail -$((dur + 12)) /out/run.txt
exit \$rc
EOF
start=$(date +%s)
set +e
"$dir/vm-pair.sh" --siw off --timeout "${PAIR_TIMEOUT:-600}" --bin "$bin" --outdir "$out" \
	--a 'rdmabench server --bind 198.51.100.1 --once >/out/server.log 2>&1 & wait-listen 18515 60 && pair-signal up; wait' \
	--b "$b_script" 2>"$out/stderr.txt" | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
echo "pair-timeline: guests exit $rc after $(($(date +%s) - start)) s"
[[ $rc == 0 && -s $out/b/timeline.json ]] || { tail -30 "$out/stderr.txt" >&2; echo "PAIR-TIMELINE FAIL" >&2; exit 1; }
(cd "$repo" && RDMABENCH_TIMELINE_JSON=$out/b/timeline.json RDMABENCH_TIMELINE_LOSS=$(cat "$out/b/loss.txt") $GO test -count=1 -run '^TestTimelineWire$' -v ./bench/timeline) | tee "$out/check.txt"
"$bin" plot --kind timeline "$out/b/timeline.json" -o "$out/timeline.svg"
echo "pair-timeline OK: $out"
