# mesh-guest-lib.sh: sourced by the guest payloads of the 3-guest mesh beds
# (scripts/mesh-guest.sh: MPICH's mpiexec; scripts/mesh-slurm-guest.sh: Slurm's
# srun). The payload defines launch() (its launcher starting 'rdmabench mesh'
# with the flags it is given on every guest); these functions are the rest.
# shellcheck shell=sh
# shellcheck disable=SC2154 # mode and me: set by the payload that sources this file

now() { date +%s; }

# mesh_host_rank: guests 2 and 3 only host ranks; in MODE kill, guest 3 kills
# its rank (rank 2) with SIGKILL when guest 1 raises flag kill-now. Returns
# once guest 1 says done (1 if kill-now never came).
mesh_host_rank() {
	if [ "$mode" = kill ] && [ "$me" = 3 ]; then
		pair-wait kill-now 900 || return 1
		if pid=$(pidof rdmabench); then
			kill -9 "$pid" && echo "mesh3: killed rank 2 (pid $pid, SIGKILL) as it starts round 2"
		else
			echo "MESH-FAIL no rank to kill"
		fi
	fi
	pair-wait done 1800
}

# mesh_runs LABEL: guest 1's runs through launch(): the mesh (MESH_ARGS) into
# /out/mesh.json, and in MODE kill a second one (MESH_KILL_ARGS, default
# MESH_ARGS, --device-map rxe2, --round-timeout KILL_ROUND_TIMEOUT) into
# /out/mesh-kill.json, where rank 2's start of round 2 (its progress line)
# raises kill-now; the launcher's status goes to /out/mesh-kill.rc. Each
# run's summary line says LABEL's exit and what mesh_rank0 (the payload's,
# optional) prints. Sets rc: 1 when the first run failed.
mesh_runs() {
	# shellcheck disable=SC2034 # rc: the payload exits with it
	rc=0
	t0=$(now)
	# shellcheck disable=SC2086 # MESH_ARGS is a word list
	# progress lines (stderr) stream to the console; the matrix goes to /out/mesh.txt
	launch $MESH_ARGS --json /out/mesh.json >/out/mesh.txt
	r=$?
	cat /out/mesh.txt
	echo "MESH-RUN $1 exit $r$(mesh_rank0 /tmp/rank0.rc) after $(($(now) - t0)) s"
	[ $r = 0 ] || rc=1
	[ "$mode" = kill ] || return 0
	rm -f /tmp/rank0.rc
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
	cp /tmp/rank0.rc /out/mesh-kill.rank0 2>/dev/null
	cat /out/mesh-kill.txt
	echo "MESH-KILL $1 exit $r$(mesh_rank0 /out/mesh-kill.rank0) after $(($(now) - t0)) s"
}

# mesh_rank0 FILE: what a run's summary adds about rank 0's own status; none
# here, a payload may define its own after sourcing this file.
mesh_rank0() { :; }
