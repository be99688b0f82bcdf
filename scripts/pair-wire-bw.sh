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
# Both guests sample their CPUs and rxe2's packets every 0.5 s (pair-abba-lib.sh),
# and wirebw adds each run's steady packet rate and the ratio of those.
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
# The guests' payloads (pair-abba-lib.sh): rxe2's counters and the guests'
# CPU time around each run, both tools' whole processes on CPU 1 (WIRE_PIN=0:
# unpinned; WIRE_RB_TASKSET=0: only rdmabench's engine thread, --cpu 1).
. "$dir/pair-abba-lib.sh"
PAIR_PIN=${WIRE_PIN:-1} pair_abba_payloads "$order" "$pt" "$rb" "${WIRE_RB_TASKSET:-1}"
"$dir/vm-pair.sh" --siw off --timeout "${WIRE_TIMEOUT:-1800}" --bin "$bin" --outdir "$out/guests" \
	--a "$pair_a" --b "$pair_b" >"$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
echo "host load after: $(uptime)"
cd "$repo" && go run ./scripts/wirebw -dir "$out/guests" -order "$order"
