#!/usr/bin/env bash
# mesh-slurm.sh: make mesh-slurm. Three SoftRoCE guests on one segment
# (scripts/vm-mesh.sh) run a Slurm cluster (Debian's slurm-wlm: slurmctld and
# slurmd in guest 1, slurmd in guests 2 and 3, munged with one key in all), and
# guest 1 launches 'rdmabench mesh' on all three with
#   srun --mpi=pmi2 -N 3 --ntasks-per-node=1 --kill-on-bad-exit=0
# (scripts/mesh-slurm-guest.sh): the ranks bootstrap through Slurm's pmi2
# plugin, which serves PMI-1 on PMI_FD.
#   1. the pairs mesh (MESH_SLURM_ARGS) -> build/mesh-slurm/mesh.json: every
#      pair measured, the launcher recorded as srun
#   2. unless MESH_SLURM_KILL=0: the same with guest 3's rank killed (SIGKILL)
#      as it starts its pair in round 2: the others finish, rank 0 exits 6 with
#      a partial document
#      -> build/mesh-slurm/mesh-kill.json
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}
check=${MESHCHECK_BIN:-$repo/build/meshcheck}
out=${MESH_OUT:-$repo/build/mesh-slurm}
args=${MESH_SLURM_ARGS:---op send,write --mode lat,bw --size 4K -n 400 --round-timeout 120s}
kill=${MESH_SLURM_KILL:-1}
plugdir=/usr/lib/x86_64-linux-gnu/slurm-wlm
for f in "$bin" "$check"; do
	[[ -x $f ]] || { echo "mesh-slurm: $f missing (make build; go build -o build/meshcheck ./scripts/meshcheck)" >&2; exit 2; }
done
for t in slurmctld slurmd srun sinfo scontrol munged /usr/sbin/slurmstepd "$plugdir/mpi_pmi2.so"; do
	[[ -e $t ]] || command -v "$t" >/dev/null \
		|| { echo "mesh-slurm: $t not found: run scripts/install-deps.sh (Debian packages slurmctld slurmd slurm-client munge)" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mesh-slurm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One munge key for the cluster, made for this run.
head -c 1024 /dev/urandom >"$tmp/munge.key"
chmod 400 "$tmp/munge.key"
# The plugins this configuration loads (slurmctld, slurmd, slurmstepd, srun;
# found with strace on Debian 12's slurm-wlm 22.05), not the whole 23 MB.
mkdir "$tmp/plugins"
for p in accounting_storage_none acct_gather_energy_none acct_gather_filesystem_none \
	acct_gather_interconnect_none acct_gather_profile_none auth_munge cgroup_v1 core_spec_none \
	cred_munge ext_sensors_none hash_k12 job_container_none jobacct_gather_none jobcomp_none \
	launch_slurm mcs_none mpi_none mpi_pmi2 preempt_none prep_script priority_basic \
	proctrack_pgid route_default sched_builtin select_linear select_cons_res select_cons_tres \
	switch_none task_none topology_none; do
	[[ -f $plugdir/$p.so ]] || { echo "mesh-slurm: $plugdir/$p.so not found (slurm-wlm-basic-plugins)" >&2; exit 2; }
	ln -s "$plugdir/$p.so" "$tmp/plugins/$p.so"
done
# The cluster: vm-mesh.sh's guests mesh1-3 on 198.51.100.1-3; daemons run as
# root, state and logs in /tmp; no cgroups (proctrack/pgid, task/none).
cat >"$tmp/slurm.conf" <<'EOF'
ClusterName=rdmabench
SlurmctldHost=mesh1(198.51.100.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/tmp/slurm/ctld
SlurmdSpoolDir=/tmp/slurm/d
SlurmctldPidFile=/tmp/slurm/slurmctld.pid
SlurmdPidFile=/tmp/slurm/slurmd.pid
SlurmctldLogFile=/tmp/slurm/slurmctld.log
SlurmdLogFile=/tmp/slurm/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
ReturnToService=2
# TCG guests on a shared 2-core host are slow: generous timeouts
MessageTimeout=60
SlurmdTimeout=600
SlurmctldTimeout=600
InactiveLimit=0
KillWait=5
NodeName=mesh[1-3] NodeAddr=198.51.100.[1-3] CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 State=UNKNOWN
PartitionName=mesh Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
# slurmd loads a cgroup plugin whatever the config: without cgroup.conf it
# autodetects the version and fails where nothing is mounted on /sys/fs/cgroup.
# Named, cgroup/v1 only loads (proctrack/pgid and task/none use no cgroups); the
# guest mounts an empty tmpfs there.
printf 'CgroupPlugin=cgroup/v1\n' >"$tmp/cgroup.conf"
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$tmp/nsswitch.conf"

start=$(date +%s)
set +e
"$dir/vm-mesh.sh" --guests 3 --timeout "${MESH_TIMEOUT:-900}" --bin "$bin" \
	--bin slurmctld --bin slurmd --bin srun --bin sinfo --bin scontrol --bin munged \
	--bin /usr/sbin/slurmstepd:/usr/sbin/slurmstepd --dir "$tmp/plugins:$plugdir" \
	--file "$tmp/slurm.conf:/etc/slurm/slurm.conf" --file "$tmp/cgroup.conf:/etc/slurm/cgroup.conf" --file "$tmp/munge.key:/etc/munge/munge.key" \
	--file "$tmp/nsswitch.conf:/etc/nsswitch.conf" --file "$dir/mesh-slurm-guest.sh" --file "$dir/mesh-guest-lib.sh" --outdir "$out/guests" \
	--env "MESH_ARGS=$args" --env "MESH_KILL_ARGS=${MESH_KILL_ARGS:---op send,write --mode lat,bw --size 4K -n 200}" \
	--env "KILL_ROUND_TIMEOUT=${KILL_ROUND_TIMEOUT:-90s}" \
	--run "sh /work/mesh-slurm-guest.sh $([[ $kill == 0 ]] && echo run || echo kill)" 2>"$out/stderr.txt" | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
echo "mesh-slurm: guests exit $rc after $(($(date +%s) - start)) s"
g1=$out/guests/g1
if [[ $rc != 0 || ! -s $g1/mesh.json ]]; then
	tail -30 "$out/stderr.txt" >&2
	echo "MESH-SLURM FAIL: guests exit $rc$([[ -s $g1/mesh.json ]] || echo ', no mesh.json') (Slurm logs: $out/guests/g*/slurm*.log)" >&2
	exit 1
fi
cp "$g1/mesh.json" "$out/mesh.json"
"$check" complete "$out/mesh.json" 3 send,write launcher=slurm
echo "mesh-slurm: launcher: $(jq -r .launcher "$out/mesh.json")"
if [[ $kill != 0 ]]; then
	echo "--- killed rank: srun exit $(cat "$g1/mesh-kill.rc" 2>/dev/null), rank 0 exit $(cat "$g1/mesh-kill.rank0" 2>/dev/null)"
	[[ -s $g1/mesh-kill.json ]] || { echo "MESH-SLURM FAIL: no mesh-kill.json" >&2; exit 1; }
	cp "$g1/mesh-kill.json" "$out/mesh-kill.json"
	grep -q 'mesh3: killed rank 2' "$out/log.txt" || { echo "MESH-SLURM FAIL: rank 2 was not killed" >&2; exit 1; }
	"$check" killed "$out/mesh-kill.json" 2
	[[ $(cat "$g1/mesh-kill.rank0" 2>/dev/null) == 6 ]] || { echo "MESH-SLURM FAIL: rank 0 of the killed run did not exit 6" >&2; exit 1; }
	[[ $(cat "$g1/mesh-kill.rc" 2>/dev/null) =~ ^[1-9][0-9]*$ ]] || { echo "MESH-SLURM FAIL: srun of the killed run did not exit nonzero" >&2; exit 1; }
fi
echo "mesh-slurm: passed in $(($(date +%s) - start)) s: $out/mesh.json$([[ $kill == 0 ]] || echo ", $out/mesh-kill.json")"
