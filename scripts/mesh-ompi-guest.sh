#!/bin/sh
# mesh-ompi-guest.sh: the payload of every guest of scripts/vm-mesh.sh for
# scripts/mesh-ompi.sh. Guest 1 runs Open MPI's mpirun, which starts orted in
# guests 2 and 3 over ssh and one rank in each guest; the others wait.
set -u
mkdir -p /out
if [ "$RDMABENCH_MESH_INDEX" != 1 ]; then
	pair-wait "done" 1800
	exit 0
fi
mesh-wait-up 300 || { echo "MESH-FAIL guests not up"; pair-signal "done"; exit 1; }
t0=$(date +%s)
# shellcheck disable=SC2086 # MESH_ARGS is a word list
timeout -s KILL "${MESH_TIMEOUT:-900}" mpirun --allow-run-as-root -np "$RDMABENCH_MESH_SIZE" \
	--host "$RDMABENCH_MESH_HOSTS" --map-by node --mca plm_rsh_agent ssh \
	--mca oob_tcp_if_include eth0 --mca plm_rsh_no_tree_spawn 1 \
	rdmabench mesh --net 198.51.100.0/24 $MESH_ARGS --json /out/mesh.json >/out/mesh.txt
r=$?
cat /out/mesh.txt
echo "MESH-RUN mpirun exit $r after $(($(date +%s) - t0)) s"
pair-signal "done"
exit $r
