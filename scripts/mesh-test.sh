#!/usr/bin/env bash
# mesh-test.sh: the mesh stage (make mesh-test). Boots three SoftRoCE guests on
# one segment (scripts/vm-mesh.sh); guest 1 launches 'rdmabench mesh' on all
# three with MPICH's mpiexec over ssh (scripts/mesh-guest.sh): 3 ranks, the
# pairs pattern, SEND and WRITE latency and bandwidth, a few hundred iterations.
# Then checks the matrix: every pair measured across hosts, schema-valid JSON,
# and the document passes the gate against itself.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
check=${MESHCHECK_BIN:-$repo/build/meshcheck}
out=${MESH_OUT:-$repo/build/mesh-test}
args=${MESH_TEST_ARGS:---op send,write --mode lat,bw --size 4K -n 300 --round-timeout 60s}
for f in "$bin" "$check"; do
	[[ -x $f ]] || { echo "mesh-test: $f missing (make build; go build -o build/meshcheck ./scripts/meshcheck)" >&2; exit 2; }
done
for t in mpiexec.hydra hydra_pmi_proxy; do
	command -v "$t" >/dev/null || { echo "mesh-test: $t not found: run scripts/install-deps.sh (Debian package mpich)" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
set +e
"$dir/vm-mesh.sh" --guests 3 --timeout "${MESH_TIMEOUT:-400}" --bin "$bin" --bin "$(command -v mpiexec.hydra)" \
	--bin "$(command -v hydra_pmi_proxy)" --file "$dir/mesh-guest.sh" --file "$dir/mesh-guest-lib.sh" --outdir "$out" \
	--env "MESH_ARGS=$args" --run 'sh /work/mesh-guest.sh run' 2>"$out/stderr.txt" | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
echo "mesh-test: guests exit $rc after $(($(date +%s) - start)) s"
if [[ $rc != 0 || ! -s $out/g1/mesh.json ]]; then
	tail -30 "$out/stderr.txt" >&2
	echo "MESH-TEST FAIL" >&2
	exit 1
fi
"$check" complete "$out/g1/mesh.json" 3 send,write
"$bin" compare --baseline "$out/g1/mesh.json" "$out/g1/mesh.json" >"$out/gate-self.txt" \
	|| { cat "$out/gate-self.txt"; echo "MESH-TEST FAIL: the run against itself did not pass the gate" >&2; exit 1; }
echo "mesh: passed, $(($(date +%s) - start)) s wall (boot included)"
