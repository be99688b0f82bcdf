#!/usr/bin/env bash
# isolation-test.sh: make isolation-test. One SoftRoCE guest runs
# scripts/isolation-guest.sh (the whole attacker catalogue in loopback,
# four attackers against a server, --max-inflation crossed and not); then
# on the host its documents are checked against isolation.schema.json
# (TestIsolationFiles). Output in build/isolation/. About 4 minutes under TCG.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
out=build/isolation
rm -rf "$out" && mkdir -p "$out"
CGO_ENABLED=0 $GO build -o build/jcheck ./scripts/jcheck
scripts/vm-run.sh --timeout 900 --bin build/rdmabench --bin build/jcheck --file scripts/isolation-guest.sh \
	--outdir "$out" -- sh /work/isolation-guest.sh
RDMABENCH_ISOLATION_DIR=$PWD/$out $GO test -count=1 -run '^TestIsolationFiles$' -v ./bench/isolation
echo "isolation-test OK: $out"
