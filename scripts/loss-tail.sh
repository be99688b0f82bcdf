#!/usr/bin/env bash
# loss-tail.sh: loss and the tail on the two-host bed. RoCE needs a lossless
# fabric; this measures what loss does to it: guest b adds netem loss (and
# --delay) on its eth0, then runs SEND and WRITE latency and WRITE bandwidth
# against the server in guest a at each loss rate, with both sides' port
# counters. Writes build/loss-tail/loss-<rate>.json, table.md (p50, p99, p99.9,
# bandwidth and retransmission counters per loss rate) and latency.svg.
# Emulation figures: only the shape (how the tail grows with loss) carries over.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
out=${LOSS_OUT:-$repo/build/loss-tail}
rates=${LOSS_RATES:-0 0.1 1 5}
iters=${LOSS_ITERS:-1000}
delay=${LOSS_DELAY:-}
go=$(command -v go || echo /usr/local/go/bin/go)
[[ -x $bin ]] || (cd "$repo" && "$go" build -o "$bin" ./cmd/rdmabench)
rm -rf "$out"
mkdir -p "$out"
netem="netem loss \$r%${delay:+ delay $delay}"
start=$(date +%s)
"$dir/vm-pair.sh" --siw off --timeout "${LOSS_TIMEOUT:-1500}" --bin "$bin" --outdir "$out/guests" \
	--a 'rdmabench server --bind 198.51.100.1 >/out/server.log 2>&1 & wait-listen 18515 60 && pair-signal up; pair-wait done 1400' \
	--b "pair-wait up || exit 1
for r in $rates; do
  tc qdisc del dev eth0 root 2>/dev/null
  [ \$r = 0 ] || tc qdisc add dev eth0 root $netem || exit 1
  echo \"loss \$r%: \$(tc qdisc show dev eth0 | head -1)\"
  rdmabench run 198.51.100.1 --op send,write --mode lat,bw -n $iters --json /out/loss-\$r.json >/out/loss-\$r.txt 2>&1 || { cat /out/loss-\$r.txt; exit 1; }
  grep -E '^ (send|write) ' /out/loss-\$r.txt
done
tc qdisc del dev eth0 root 2>/dev/null
pair-signal done" | tee "$out/log.txt"
cp "$out"/guests/b/loss-*.json "$out/"
(cd "$repo" && "$go" run ./scripts/losstail -plot "$out/latency.svg" "$out"/loss-*.json) | tee "$out/table.md"
echo "loss-tail: $(($(date +%s) - start)) s; table in $out/table.md, plot in $out/latency.svg"
