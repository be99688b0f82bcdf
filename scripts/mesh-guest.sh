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
mode=${1:-run}
mkdir -p /out
me=$RDMABENCH_MESH_INDEX
now() { date +%s; }

if [ "$me" != 1 ]; then
	if [ "$mode" = kill ] && [ "$me" = 3 ]; then
		pair-wait kill-now 900 || exit 1
		if pid=$(pidof rdmabench); then
			kill -9 "$pid" && echo "mesh3: killed rank 2 (pid $pid, SIGKILL) as it starts round 2"
		else
			echo "MESH-FAIL no rank to kill"
		fi
	fi
	pair-wait done 1800
	exit 0
fi

mesh-wait-up 300 || { echo "MESH-FAIL guests not up"; pair-signal done; exit 1; }
launch() {
	timeout -s KILL "${MESH_TIMEOUT:-900}" mpiexec.hydra -launcher ssh -hosts "$RDMABENCH_MESH_HOSTS" -iface eth0 -disable-auto-cleanup \
		-ppn 1 -np "$RDMABENCH_MESH_SIZE" rdmabench mesh --net 198.51.100.0/24 "$@"
}
rc=0
t0=$(now)
# shellcheck disable=SC2086 # MESH_ARGS is a word list
# progress lines (stderr) stream to the console; the matrix goes to /out/mesh.txt
launch $MESH_ARGS --json /out/mesh.json >/out/mesh.txt
r=$?
cat /out/mesh.txt
echo "MESH-RUN exit $r after $(($(now) - t0)) s"
[ $r = 0 ] || rc=1
if [ "$mode" = kill ]; then
	t0=$(now)
	# the progress lines (stderr) pass through; rank 2's start of round 2 raises kill-now
	# (a fixed delay is outlived by a quick run on a quiet host)
	# shellcheck disable=SC2086
	{ launch ${MESH_KILL_ARGS:-$MESH_ARGS} --device-map rxe2 --round-timeout "${KILL_ROUND_TIMEOUT:-30s}" \
		--json /out/mesh-kill.json 2>&1 >/out/mesh-kill.txt; echo $? >/tmp/kill.rc; } \
		| while IFS= read -r line; do
			echo "$line"
			case $line in
			*"mesh rank 2: round 2/3"*) [ -e /tmp/pair-flags/kill-now ] || pair-signal kill-now ;;
			esac
		done
	r=$(cat /tmp/kill.rc)
	echo "$r" >/out/mesh-kill.rc
	cat /out/mesh-kill.txt
	echo "MESH-KILL exit $r after $(($(now) - t0)) s"
fi
pair-signal done
exit $rc
