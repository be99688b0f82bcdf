#!/bin/sh
# mesh-guest.sh MODE: the payload of every guest of scripts/vm-mesh.sh for the
# mesh stages. Guest 1 launches 'rdmabench mesh' on all guests with MPICH's
# mpiexec (hydra, over ssh to each guest's dropbear); the other guests only
# host ranks (and, in MODE kill, guest 3 kills its rank mid-run).
#   MODE run   one mesh run: MESH_ARGS (the test flags), JSON to /out/mesh.json
#   MODE kill  then a second run (MESH_KILL_ARGS, default MESH_ARGS; with
#              --device-map rxe2 and --round-timeout KILL_ROUND_TIMEOUT) where
#              guest 3's rank (rank 2) is killed with SIGKILL as it starts its
#              pair in round 2 (guest 1 sees its progress line and raises flag
#              kill-now): JSON to /out/mesh-kill.json, mpiexec's exit status to
#              /out/mesh-kill.rc
set -u
# shellcheck disable=SC2034 # read by mesh-guest-lib.sh
mode=${1:-run}
mkdir -p /out
me=$RDMABENCH_MESH_INDEX
# shellcheck source=scripts/mesh-guest-lib.sh
. "$(dirname "$0")/mesh-guest-lib.sh"

if [ "$me" != 1 ]; then
	mesh_host_rank
	exit $?
fi

mesh-wait-up 300 || { echo "MESH-FAIL guests not up"; pair-signal done; exit 1; }
launch() {
	timeout -s KILL "${MESH_TIMEOUT:-900}" mpiexec.hydra -launcher ssh -hosts "$RDMABENCH_MESH_HOSTS" -iface eth0 -disable-auto-cleanup \
		-ppn 1 -np "$RDMABENCH_MESH_SIZE" rdmabench mesh --net 198.51.100.0/24 "$@"
}
mesh_runs mpiexec
pair-signal done
exit $rc
