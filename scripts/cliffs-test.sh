#!/usr/bin/env bash
# cliffs-test.sh: make cliffs-test. One SoftRoCE guest runs
# scripts/cliffs-guest.sh (the planted load cliff, cliffs along QPs 1..256);
# then on the host its documents are checked against cliffs.schema.json and
# their announced time (TestCliffsFiles) and plotted (plot --kind cliffs).
# Output in build/cliffs/. About 2-3 minutes under TCG.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
out=build/cliffs
rm -rf "$out" && mkdir -p "$out"
$GO test -c -o build/cliffs.test ./bench/cliffs
scripts/vm-run.sh --timeout 600 --bin build/rdmabench --bin build/cliffs.test --file scripts/cliffs-guest.sh \
	--outdir "$out" -- sh /work/cliffs-guest.sh
RDMABENCH_CLIFFS_DIR=$PWD/$out $GO test -count=1 -run '^TestCliffsFiles$' -v ./bench/cliffs
for f in "$out"/*.json; do
	build/rdmabench plot "$f" --kind cliffs -o "${f%.json}.svg"
done
echo "cliffs-test OK: $out"
