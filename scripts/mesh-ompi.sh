#!/usr/bin/env bash
# mesh-ompi.sh: Open MPI's mpirun launching 'rdmabench mesh' on the three-guest
# bed (scripts/vm-mesh.sh): guest 1 runs mpirun, which starts Open MPI's orted in
# guests 2 and 3 over ssh (each guest's dropbear); the ranks bootstrap through
# the orted's PMIx server, so rdmabench is built with -tags pmix (libpmix).
# The guests get orted, mpirun, the ORTE components (not the MPI layer's),
# PMIx's components and help files. Writes build/mesh-ompi/mesh.json.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_PMIX_BIN:-$repo/build/rdmabench-pmix}
check=${MESHCHECK_BIN:-$repo/build/meshcheck}
out=${MESH_OUT:-$repo/build/mesh-ompi}
args=${MESH_OMPI_ARGS:---op send,write --mode lat,bw --size 4K -n 400 --round-timeout 120s}
mca=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
pmix=/usr/lib/x86_64-linux-gnu/pmix2
for f in "$bin" "$check"; do
	[[ -x $f ]] || { echo "mesh-ompi: $f missing (go build -tags pmix -o build/rdmabench-pmix ./cmd/rdmabench; go build -o build/meshcheck ./scripts/meshcheck)" >&2; exit 2; }
done
for t in orterun orted "$mca/mca_plm_rsh.so" "$pmix/lib/libpmix.so.2"; do
	[[ -e $t ]] || command -v "$t" >/dev/null || { echo "mesh-ompi: $t not found (Debian packages openmpi-bin libpmix-dev)" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mesh-ompi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# ORTE's run-time components only: mpirun and orted load no MPI-layer component.
mkdir "$tmp/mca"
for c in "$mca"/mca_{errmgr,ess,filem,grpcomm,iof,odls,oob,plm,pmix,ras,reachable,regx,rmaps,rml,routed,rtc,schizo,shmem,state,pstat}_*.so; do
	ln -s "$c" "$tmp/mca/"
done
start=$(date +%s)
set +e
"$dir/vm-mesh.sh" --guests 3 --timeout "${MESH_TIMEOUT:-900}" --bin "$bin:/bin/rdmabench" \
	--bin orterun:/bin/mpirun --bin orted --dir "$tmp/mca:$mca" --dir "$pmix/lib/pmix" --dir "$pmix/share" \
	--dir /usr/share/openmpi --file /etc/openmpi/openmpi-mca-params.conf:/etc/openmpi/openmpi-mca-params.conf \
	--file "$dir/mesh-ompi-guest.sh" --outdir "$out/guests" --env "MESH_ARGS=$args" \
	--run 'sh /work/mesh-ompi-guest.sh' 2>"$out/stderr.txt" | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
echo "mesh-ompi: guests exit $rc after $(($(date +%s) - start)) s"
if [[ $rc != 0 || ! -s $out/guests/g1/mesh.json ]]; then
	tail -30 "$out/stderr.txt" >&2
	echo "MESH-OMPI FAIL" >&2
	exit 1
fi
cp "$out/guests/g1/mesh.json" "$out/mesh.json"
"$check" complete "$out/mesh.json" 3 send,write launcher=pmix
echo "mesh-ompi: passed in $(($(date +%s) - start)) s: $out/mesh.json"
