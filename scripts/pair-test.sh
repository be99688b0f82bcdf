#!/usr/bin/env bash
# pair-test.sh: the two-host stage of 'make test'. Boots two SoftRoCE guests
# joined by a virtual wire (scripts/vm-pair.sh) and runs scripts/pair-test-guest.sh
# in both: a serves, b runs SEND/WRITE/READ latency and bandwidth with and without
# rdma_cm, UD and 4 QPs across the wire with no -d (both sides must pick rxe2 by
# route), the loopback-GID refusal, and the kill and stop cases of each side.
# PAIR_CASES=core (make test) leaves the kill and stop cases out
# (scripts/pair-test-guest.sh); full (the default, make pair-test) runs them.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
out=${PAIR_OUT:-$repo/build/pair}
jcheck=${JCHECK_BIN:-$repo/build/jcheck} # the guests' JSON checks (scripts/jcheck)
[[ -x $bin ]] || { echo "pair-test: $bin missing (make build)" >&2; exit 2; }
[[ -x $jcheck ]] || { echo "pair-test: $jcheck missing (make pair-test builds it)" >&2; exit 2; }
cases=${PAIR_CASES:-full}
[[ $cases == full || $cases == core ]] || { echo "pair-test: PAIR_CASES=$cases: want full or core" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
set +e
"$dir/vm-pair.sh" --siw off --timeout "${PAIR_TIMEOUT:-600}" --bin "$bin" --bin "$jcheck" --file "$dir/pair-test-guest.sh" \
	--outdir "$out" --a "sh /work/pair-test-guest.sh a $cases" --b "sh /work/pair-test-guest.sh b $cases" "$@" 2>"$out/stderr.txt" | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
echo "pair-test: exit $rc after $(($(date +%s) - start)) s"
if [[ $rc != 0 ]] || ! grep -q '^a: PAIR-A DONE' "$out/log.txt" || ! grep -q '^b: PAIR-B DONE' "$out/log.txt"; then
	tail -30 "$out/stderr.txt" >&2
	echo "PAIR-TEST FAIL" >&2
	exit 1
fi
n=$(grep -c 'PAIR-OK' "$out/log.txt")
echo "pair: $n passed, 0 failed"
