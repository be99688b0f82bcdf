#!/bin/sh
# mesh-slurm-guest.sh MODE: the payload of every guest of scripts/vm-mesh.sh for
# make mesh-slurm (scripts/mesh-slurm.sh). Every guest starts munged and slurmd
# (guest 1 also slurmctld); guest 1 waits until the three nodes are idle and
# launches 'rdmabench mesh' on all with srun --mpi=pmi2; the other guests only
# host ranks (and, in MODE kill, guest 3 kills its rank mid-run).
#   MODE run   one mesh run: MESH_ARGS, JSON to /out/mesh.json
#   MODE kill  then a second run (MESH_KILL_ARGS, --device-map rxe2,
#              --round-timeout KILL_ROUND_TIMEOUT) where guest 3's rank (rank 2)
#              is killed with SIGKILL as it starts its pair in round 2 (guest 1
#              sees its progress line and raises flag kill-now): JSON to
#              /out/mesh-kill.json, srun's status to /out/mesh-kill.rc, rank
#              0's own status to /out/mesh-kill.rank0
# Each guest's Slurm and munge logs end up in its /out.
set -u
# shellcheck disable=SC2034 # read by mesh-guest-lib.sh
mode=${1:-run}
me=$RDMABENCH_MESH_INDEX
# shellcheck source=scripts/mesh-guest-lib.sh
. "$(dirname "$0")/mesh-guest-lib.sh"
mesh_rank0() { echo ", rank 0 exit $(cat "$1" 2>/dev/null)"; }
logs() { cp /tmp/slurm/*.log /tmp/munge/munged.log /out/ 2>/dev/null; }
mkdir -p /out /tmp/slurm/ctld /tmp/slurm/d /tmp/munge /run/munge
chmod 700 /tmp/munge
# cgroup.conf names cgroup/v1, which slurmd loads but (proctrack/pgid, task/none)
# does not use: an empty tmpfs on /sys/fs/cgroup satisfies it.
grep -q ' /sys/fs/cgroup ' /proc/mounts || mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup \
	|| { echo "MESH-FAIL mount /sys/fs/cgroup"; exit 1; }
t0=$(now)
munged -f --key-file=/etc/munge/munge.key --pid-file=/tmp/munge/munged.pid \
	--log-file=/tmp/munge/munged.log --seed-file=/tmp/munge/munged.seed \
	|| { echo "MESH-FAIL munged did not start"; cat /tmp/munge/munged.log; exit 1; }
if [ "$me" = 1 ]; then
	slurmctld -i || { echo "MESH-FAIL slurmctld did not start"; logs; exit 1; }
fi
slurmd -N "mesh$me" || { echo "MESH-FAIL slurmd did not start"; logs; exit 1; }

if [ "$me" != 1 ]; then
	mesh_host_rank
	r=$?
	logs
	exit $r
fi

# guest 1: wait for the three slurmd to register
i=0
until [ "$(sinfo -h -t idle -o %D 2>/dev/null)" = 3 ]; do
	i=$((i + 1))
	if [ $i -gt 600 ]; then
		echo "MESH-FAIL the nodes are not idle after 300 s:"; sinfo -N; logs; pair-signal "done"; exit 1
	fi
	sleep 0.5
done
echo "MESH-SLURM cluster up after $(($(now) - t0)) s: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
# launch [srun flags --] mesh flags: srun starts rank i in guest i+1; each rank
# runs under sh so that rank 0's own exit status is kept (srun's is every task's).
launch() {
	# shellcheck disable=SC2016 # the inner sh expands it
	timeout -s KILL "${MESH_TIMEOUT:-900}" srun --mpi=pmi2 -N 3 --ntasks-per-node=1 --kill-on-bad-exit=0 \
		sh -c 'rdmabench mesh --net 198.51.100.0/24 "$@"; r=$?; [ "$SLURM_PROCID" = 0 ] && echo $r >/tmp/rank0.rc; exit $r' \
		rank "$@"
}
mesh_runs srun
pair-signal "done"
logs
exit $rc
