#!/usr/bin/env bash
# cliffs-test.sh: make cliffs-test. One SoftRoCE guest runs
# scripts/cliffs-guest.sh (the planted load cliff, cliffs along QPs 1..256
# and along MRs 1..1024, 4 KiB random READ/WRITE over a 1 GiB region: the
# guest has 3 GiB); then on the host its documents are checked against
# cliffs.schema.json and their announced time (TestCliffsFiles) and plotted
# (plot --kind cliffs), the region's results with jcheck.
# Output in build/cliffs/. About 4-5 minutes under TCG.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
out=build/cliffs
rm -rf "$out" && mkdir -p "$out"
$GO test -c -o build/cliffs.test ./bench/cliffs
scripts/vm-run.sh --timeout 600 --mem 3072 --bin build/rdmabench --bin build/cliffs.test --file scripts/cliffs-guest.sh \
	--outdir "$out" -- sh /work/cliffs-guest.sh
RDMABENCH_CLIFFS_DIR=$PWD/$out $GO test -count=1 -run '^TestCliffsFiles$' -v ./bench/cliffs
# the search against a server wrote the client's document
$GO run ./scripts/jcheck "$out/server.json" 'role == "client"'
# 4 KiB random READ and WRITE over 1 GiB: both results carry the region and a message rate
$GO run ./scripts/jcheck "$out/workload/region.json" 'count(results.*.workload.region_bytes == 1073741824) == 2' \
	'count(results.*.workload.access == "random") == 2' 'count(results.*.bandwidth.mpps > 0) == 2'
cat "$out/workload/region.err"
for f in "$out"/*.json; do
	build/rdmabench plot "$f" --kind cliffs -o "${f%.json}.svg"
done
echo "cliffs-test OK: $out"
