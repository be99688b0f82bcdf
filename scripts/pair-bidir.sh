#!/usr/bin/env bash
# pair-bidir.sh: bidirectional WRITE bandwidth across the two-host bed
# (scripts/vm-pair.sh), rdmabench -b against perftest's ib_write_bw -b, both
# 64 KiB, tx depth 128, CQ moderation 100, ITERS iterations per side and run
# (BIDIR_ITERS, default 800), 4 runs each in ABBA BAAB order (a: servers, b:
# clients); prints each run and the ratio of the medians (target >= 0.95).
# Part of 'make bench'.
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
order="pt rb rb pt rb pt pt rb"
[[ -x $bin ]] || { echo "pair-bidir: $bin missing (make build)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
pt="ib_write_bw -d rxe2 -x 1 -b -s 65536 -n $iters -t 128 -Q 100"
"$dir/vm-pair.sh" --siw off --timeout "${BIDIR_TIMEOUT:-1200}" --bin "$bin" --outdir "$out/guests" \
	--a "rdmabench server --bind 198.51.100.1 -p 18600 >/out/server.log 2>&1 &
i=0
for who in $order; do
  i=\$((i + 1))
  [ \$who = pt ] || continue
  pair-wait want-\$i 600 || exit 1
  $pt >/out/pt-server-\$i.txt 2>&1 &
  p=\$!
  wait-listen 18515 60 && pair-signal up-\$i
  wait \$p
done
pair-wait done 600" \
	--b "i=0
for who in $order; do
  i=\$((i + 1))
  if [ \$who = pt ]; then
    pair-signal want-\$i; pair-wait up-\$i 120 || exit 1
    $pt 198.51.100.1 >/out/pt-\$i.txt 2>&1 || { cat /out/pt-\$i.txt; exit 1; }
  else
    rdmabench run 198.51.100.1 -p 18600 --op write --mode bw --size 64K --iters $iters --tx-depth 128 --cq-mod 100 -b --report-both ${BIDIR_RB_FLAGS:-} \
      --json /out/rb-\$i.json >/out/rb-\$i.txt 2>&1 || { cat /out/rb-\$i.txt; exit 1; }
  fi
done
pair-signal done" >"$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
cd "$out/guests/b"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pts=() rbs=()
i=0
for who in $order; do
	i=$((i + 1))
	if [[ $who == pt ]]; then
		# the row after the header: #bytes #iterations BW peak BW average MsgRate; -b sums both sides
		read -r bw rate < <(awk '/BW average/ { getline; print $4, $5; exit }' "pt-$i.txt")
		# perftest's MB/sec: 2^20 or 10^6 bytes/s? decide from the message rate
		mib=$(awk -v r="$rate" 'BEGIN { printf "%.4f", r * 1e6 * 65536 / 1048576 }')
		unit=$(awk -v b="$bw" -v m="$mib" 'BEGIN { print (b > 0.9 * m && b < 1.1 * m) ? "MiB" : "MB" }')
		[[ $unit == MiB ]] || bw=$(awk -v b="$bw" 'BEGIN { printf "%.4f", b * 1e6 / 1048576 }')
		pts+=("$bw")
		echo "run $i perftest ib_write_bw -b: $bw MiB/s (both directions)"
	else
		bw=$(jq -r '.results[0].bandwidth.mib_per_s' "rb-$i.json")
		sides=$(jq -r '.results[0].sides | "client \(.client.bandwidth.mib_per_s) + server \(.server.bandwidth.mib_per_s)"' "rb-$i.json" 2>/dev/null || true)
		rbs+=("$bw")
		echo "run $i rdmabench -b: $bw MiB/s (both directions${sides:+: $sides})"
	fi
done
p=$(printf '%s\n' "${pts[@]}" | median)
r=$(printf '%s\n' "${rbs[@]}" | median)
v=$(awk -v a="$r" -v b="$p" 'BEGIN { printf "%.3f", a / b }')
res=$(awk -v v="$v" 'BEGIN { print (v >= 0.95) ? "PASS" : "MISS" }')
echo "medians: rdmabench -b $r MiB/s, ib_write_bw -b $p MiB/s; ratio $v (target >= 0.95) $res"
