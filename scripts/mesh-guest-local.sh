#!/bin/sh
# mesh-guest-local.sh: the small mesh stage of make test, inside the one
# SoftRoCE guest (called by scripts/guest-test.sh; needs rdmabench,
# meshcheck, jcheck, mpiexec.hydra and hydra_pmi_proxy in PATH). MPICH's mpiexec
# launches 3 ranks locally (-launcher fork, no ssh), all on rxe0 and
# 127.0.0.1 (--device-map rxe0, --net 127.0.0.0/8):
#   1. a pairs mesh, SEND and WRITE latency, 400 iterations (p99 needs 368 samples): exit 0, every pair
#      measured (meshcheck complete), local ranks 0..2 with their own ports
#      (meshcheck local), and the document passes the gate against itself;
#   2. rank 2 killed (SIGKILL) as it starts its pair in round 2: rank 0 exits 6
#      with a partial document, rank 2 lost, its pairs failed, the others
#      measured (meshcheck killed), in bounded time;
#   3. SIGTERM to mpiexec mid-run (2 ranks, one pair): rank 0 still writes a
#      partial document and exits 6, in bounded time.
# In 2 and 3 each rank gets its own hydra proxy (-hosts 127.0.0.1,127.0.0.2,
# 127.0.0.3 -ppn 1), as on a real cluster: hydra's proxy kills every rank it
# runs when one of them dies by a signal. Rank 0 runs under a small sh wrapper
# that records its exit status (hydra reports only the worst one).
set -u
fail() { echo "MESH-LOCAL FAIL: $*"; exit 1; }
now() { date +%s; }
out=${MESH_LOCAL_DIR:-/tmp/mesh-local}
mkdir -p "$out"
t00=$(now)
# (MESH_LOCAL_COMMON, MESH_LOCAL_DEVICE: a dry run on a host without RDMA, e.g. --transport tcp)
common=${MESH_LOCAL_COMMON:---net 127.0.0.0/8 --device-map rxe0}
device=${MESH_LOCAL_DEVICE-rxe0}
ops=${MESH_LOCAL_OPS:-send,write}
hosts3="-launcher fork -disable-auto-cleanup -hosts 127.0.0.1,127.0.0.2,127.0.0.3 -ppn 1"
hosts2="-launcher fork -disable-auto-cleanup -hosts 127.0.0.1,127.0.0.2 -ppn 1"

echo "--- 3 ranks, one proxy: SEND and WRITE latency, 400 iterations (p99 needs 368 samples)"
t0=$(now)
# shellcheck disable=SC2086 # word lists
timeout -s KILL 60 mpiexec.hydra -launcher fork -np 3 rdmabench mesh $common --port 18700 --op $ops --mode lat \
	-n 400 --round-timeout 30s --connect-timeout 10s --json "$out/mesh.json" >"$out/mesh.txt" 2>"$out/mesh.err"
rc=$?
cat "$out/mesh.txt"
echo "mesh: exit $rc after $(($(now) - t0)) s"
[ $rc = 0 ] || { tail -20 "$out/mesh.err"; fail "mesh run: exit $rc"; }
meshcheck complete "$out/mesh.json" 3 "$ops" modes=lat hosts=1 || fail "matrix"
meshcheck local "$out/mesh.json" 3 "$device" 18700 || fail "local ranks, ports, device map"
rdmabench compare --baseline "$out/mesh.json" "$out/mesh.json" >"$out/gate.txt" 2>&1 \
	|| { cat "$out/gate.txt"; fail "the run against itself did not pass the gate"; }
tail -1 "$out/gate.txt"

# killer RANK PATTERN LOG: copies stdin to LOG; SIGKILLs rank RANK at the first line with PATTERN.
killer() {
	k=''
	while IFS= read -r l; do
		printf '%s\n' "$l" >>"$3"
		[ -n "$k" ] && continue
		case $l in *"$2"*)
			k=1
			for p in /proc/[0-9]*; do
				c=''
				read -r c <"$p/comm" 2>/dev/null || continue
				[ "$c" = rdmabench ] || continue
				tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "PMI_RANK=$1" && kill -9 "${p#/proc/}" \
					&& echo "mesh-local: killed rank $1 (pid ${p#/proc/}, SIGKILL)" >>"$3"
			done ;;
		esac
	done
}
# rank 0's wrapper: a trapped signal does not stop sh before it records the status
printf '%s\n' 'trap : INT TERM' 'rdmabench "$@"' "echo \$? >$out/rank0.rc" >"$out/rank0.sh"
rank0="sh $out/rank0.sh"

echo "--- rank 2 killed as it starts its pair in round 2"
t0=$(now)
rm -f "$out/rank0.rc"
# one SEND latency test of 0.3 s a pair (plus its setup): the kill lands in the pair
# shellcheck disable=SC2086
{ timeout -s KILL 60 mpiexec.hydra $hosts3 -np 1 $rank0 mesh $common --op send --mode lat -D 300ms --round-timeout 30s \
	--connect-timeout 10s --json "$out/kill.json" : -np 2 rdmabench mesh $common --op send --mode lat -D 300ms \
	--round-timeout 30s --connect-timeout 10s --json "$out/kill.json" 2>&1 >"$out/kill.txt"; echo $? >"$out/kill.mpiexec.rc"; } \
	| killer 2 'mesh rank 2: round 2/3' "$out/kill.err"
took=$(($(now) - t0))
cat "$out/kill.err"
head -1 "$out/kill.txt"
echo "killed: rank 0 exit $(cat "$out/rank0.rc" 2>/dev/null), mpiexec exit $(cat "$out/kill.mpiexec.rc"), $took s"
grep -q 'killed rank 2' "$out/kill.err" || fail "rank 2 was not killed"
[ "$(cat "$out/rank0.rc" 2>/dev/null)" = 6 ] || fail "rank 0 did not exit 6 (partial)"
meshcheck killed "$out/kill.json" 2 || fail "killed rank's matrix"
[ "$took" -le 30 ] || fail "the killed run took $took s (> 30 s): something waited for the dead rank"

echo "--- SIGTERM to mpiexec mid-run (2 ranks, one round)"
t0=$(now)
rm -f "$out/rank0.rc"
# shellcheck disable=SC2086
mpiexec.hydra $hosts2 -np 1 $rank0 mesh $common --op send --mode lat -D 3s --round-timeout 30s --json "$out/term.json" \
	: -np 1 rdmabench mesh $common --op send --mode lat -D 3s --round-timeout 30s --json "$out/term.json" \
	>"$out/term.txt" 2>"$out/term.err" &
mpid=$!
i=0
until grep -q 'round 1/1' "$out/term.err" || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -TERM $mpid
i=0
while kill -0 $mpid 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $mpid 2>/dev/null && { kill -9 $mpid; fail "mpiexec still running 20 s after SIGTERM"; }
wait $mpid
took=$(($(now) - t0))
tail -3 "$out/term.err"
echo "SIGTERM: rank 0 exit $(cat "$out/rank0.rc" 2>/dev/null), $took s"
[ "$(cat "$out/rank0.rc" 2>/dev/null)" = 6 ] || fail "rank 0 did not exit 6 (partial) after SIGTERM"
[ -s "$out/term.json" ] && jcheck "$out/term.json" 'outcome == "partial"' '** ~ "interrupted (SIGINT or SIGTERM)"' \
	|| fail "no partial document after SIGTERM"
echo "MESH-LOCAL OK in $(($(now) - t00)) s"
