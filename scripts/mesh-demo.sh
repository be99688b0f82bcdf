#!/usr/bin/env bash
# mesh-demo.sh: make mesh-demo. Three SoftRoCE guests on one segment; guest 1
# launches 'rdmabench mesh' on all three with MPICH's mpiexec over ssh:
#   1. the pairs mesh: SEND and WRITE, latency (1000 iterations, so p99.9 is
#      backed) and bandwidth -> build/mesh/mesh.json, build/mesh/heatmap.svg
#   2. the same mesh with guest 3's rank killed (SIGKILL) as it starts its
#      pair in round 2: the others finish, its pair is failed, exit status 6
#      -> build/mesh/mesh-kill.json
#   3. the gate: the run against itself exits 0; against a copy where one
#      pair's p99 is raised 20 % it names that pair and exits 1.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
check=${MESHCHECK_BIN:-$repo/build/meshcheck}
out=${MESH_OUT:-$repo/build/mesh}
args=${MESH_DEMO_ARGS:---op send,write --mode lat,bw --size 4K -n 4000 --round-timeout 300s}
for f in "$bin" "$check"; do
	[[ -x $f ]] || { echo "mesh-demo: $f missing (make build)" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
set +e
"$dir/vm-mesh.sh" --guests 3 --timeout "${MESH_TIMEOUT:-1800}" --bin "$bin" --bin "$(command -v mpiexec.hydra)" \
	--bin "$(command -v hydra_pmi_proxy)" --file "$dir/mesh-guest.sh" --file "$dir/mesh-guest-lib.sh" --outdir "$out/guests" \
	--env "MESH_ARGS=$args" --env "MESH_KILL_ARGS=${MESH_KILL_ARGS:---op send,write --mode lat,bw --size 4K -n 200}" \
	--env "KILL_ROUND_TIMEOUT=${KILL_ROUND_TIMEOUT:-90s}" \
	--run 'sh /work/mesh-guest.sh kill' 2>"$out/stderr.txt" | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
echo "mesh-demo: guests exit $rc after $(($(date +%s) - start)) s"
g1=$out/guests/g1
[[ -s $g1/mesh.json ]] || { tail -30 "$out/stderr.txt" >&2; echo "MESH-DEMO FAIL: no mesh.json" >&2; exit 1; }
cp "$g1/mesh.json" "$out/mesh.json"
"$check" complete "$out/mesh.json" 3 send,write
"$bin" plot "$out/mesh.json" --kind heatmap --op send --mode lat -o "$out/heatmap.svg"
"$bin" plot "$out/mesh.json" --kind heatmap --op write --mode bw -o "$out/heatmap-write-bw.svg"

echo "--- killed rank: mpiexec exit $(cat "$g1/mesh-kill.rc" 2>/dev/null)"
[[ -s $g1/mesh-kill.json ]] || { echo "MESH-DEMO FAIL: no mesh-kill.json" >&2; exit 1; }
cp "$g1/mesh-kill.json" "$out/mesh-kill.json"
grep -q 'mesh3: killed rank 2' "$out/log.txt" || { echo "MESH-DEMO FAIL: rank 2 was not killed" >&2; exit 1; }
"$check" killed "$out/mesh-kill.json" 2
# mpiexec's status is the killed rank's signal; rank 0's own exit 6 prints "mesh partial"
[[ $(cat "$g1/mesh-kill.rc" 2>/dev/null) =~ ^[1-9][0-9]*$ ]] || { echo "MESH-DEMO FAIL: the killed run did not exit nonzero" >&2; exit 1; }
grep -q 'rdmabench: mesh partial: ' "$out/log.txt" || { echo "MESH-DEMO FAIL: rank 0 did not end partial (exit 6)" >&2; exit 1; }

echo "--- gate: the run against itself"
"$bin" compare --baseline "$out/mesh.json" "$out/mesh.json" | tail -1
echo "--- gate: one pair's p99 raised 20 %"
"$check" raise "$out/mesh.json" "$out/mesh-raised.json" 1 1.2
set +e
"$bin" compare --baseline "$out/mesh.json" "$out/mesh-raised.json" >"$out/gate-raised.txt" 2>&1
grc=$?
set -e
grep -E 'REGRESSION|regression' "$out/gate-raised.txt"
[[ $grc == 1 ]] || { echo "MESH-DEMO FAIL: gate exit $grc, want 1" >&2; exit 1; }
echo "mesh-demo: done in $(($(date +%s) - start)) s: $out/mesh.json, $out/heatmap.svg, $out/mesh-kill.json"
