//go:build experiment

package mesh

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// mungeKeyEnv carries the cluster's munge key (base64) to the slurm-node helper.
const mungeKeyEnv = "RDMABENCH_EXP_MUNGE_KEY"

const slurmPlugins = "/usr/lib/x86_64-linux-gnu/slurm-wlm"

// slurmConf is the cluster: the guests mesh1-3 on 198.51.100.1-3; daemons
// run as root, state and logs in /tmp; no cgroups (proctrack/pgid, task/none).
const slurmConf = `ClusterName=rdmabench
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
`

func init() { expkit.Register("slurm-node", slurmNode) }

// slurmNode makes this guest node meshN of the cluster: slurm-node N. It
// writes the configuration (slurm.conf; cgroup.conf naming cgroup/v1, which
// slurmd loads whatever the configuration says but proctrack/pgid and
// task/none never use, over an empty tmpfs on /sys/fs/cgroup; the munge key
// from $RDMABENCH_EXP_MUNGE_KEY; files-only name services), starts munged,
// slurmctld (node 1) and slurmd. The guest's writes stay in the guest.
func slurmNode(args []string) int {
	fail := func(f string, a ...any) int { fmt.Printf("MESH-FAIL "+f+"\n", a...); return 1 }
	if len(args) != 1 {
		return fail("usage: slurm-node N")
	}
	n := args[0]
	key, err := base64.StdEncoding.DecodeString(os.Getenv(mungeKeyEnv))
	if err != nil || len(key) == 0 {
		return fail("no munge key in %s", mungeKeyEnv)
	}
	for _, d := range []string{"/tmp/slurm/ctld", "/tmp/slurm/d", "/tmp/munge", "/run/munge", "/etc/slurm", "/etc/munge"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail("%v", err)
		}
	}
	os.Chmod("/tmp/munge", 0o700)
	hosts, _ := os.ReadFile("/etc/hosts")
	files := []struct {
		path string
		data string
		mode os.FileMode
	}{
		{"/etc/slurm/slurm.conf", slurmConf, 0o644},
		{"/etc/slurm/cgroup.conf", "CgroupPlugin=cgroup/v1\n", 0o644},
		{"/etc/munge/munge.key", string(key), 0o400},
		{"/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n", 0o644},
		{"/etc/hosts", string(hosts) + "198.51.100.1 mesh1\n198.51.100.2 mesh2\n198.51.100.3 mesh3\n", 0o644},
	}
	for _, f := range files {
		os.Remove(f.path)
		if err := os.WriteFile(f.path, []byte(f.data), f.mode); err != nil {
			return fail("%v", err)
		}
	}
	if !mountedType("/sys/fs/cgroup", "tmpfs") {
		if err := syscall.Mount("cgroup", "/sys/fs/cgroup", "tmpfs", 0, "mode=755"); err != nil {
			return fail("mount /sys/fs/cgroup: %v", err)
		}
	}
	// the daemons fork into the background; one that keeps our output open
	// does not hold us beyond WaitDelay
	start := func(name string, a ...string) error {
		var o bytes.Buffer
		c := exec.Command(name, a...)
		c.Stdout, c.Stderr, c.WaitDelay = &o, &o, 5*time.Second
		if err := c.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			return fmt.Errorf("%s did not start: %v: %s", name, err, o.String())
		}
		return nil
	}
	if err := start("munged", "-f", "--key-file=/etc/munge/munge.key", "--pid-file=/tmp/munge/munged.pid",
		"--log-file=/tmp/munge/munged.log", "--seed-file=/tmp/munge/munged.seed"); err != nil {
		b, _ := os.ReadFile("/tmp/munge/munged.log")
		return fail("%v\n%s", err, b)
	}
	if n == "1" {
		if err := start("slurmctld", "-i"); err != nil {
			return fail("%v", err)
		}
	}
	if err := start("slurmd", "-N", "mesh"+n); err != nil {
		return fail("%v", err)
	}
	return 0
}

// mountedType reports whether a file system of type typ is mounted at dir.
func mountedType(dir, typ string) bool {
	b, _ := os.ReadFile("/proc/mounts")
	for _, l := range strings.Split(string(b), "\n") {
		if fs := strings.Fields(l); len(fs) > 2 && fs[1] == dir && fs[2] == typ {
			return true
		}
	}
	return false
}

// TestSlurm is make mesh-slurm: the three guests run a Slurm cluster
// (Debian's slurm-wlm: slurmctld and slurmd in g1, slurmd in g2 and g3,
// munged with one key made for this run), and g1 launches 'rdmabench mesh' on
// all three with
//
//	srun --mpi=pmi2 -N 3 --ntasks-per-node=1 --kill-on-bad-exit=0
//
// (the ranks bootstrap through Slurm's pmi2 plugin, which serves PMI-1 on
// PMI_FD; each rank runs under the test binary's rank0rc helper, which keeps
// rank 0's own status: srun's is the worst task's):
//  1. the pairs mesh (MESH_SLURM_ARGS) -> mesh.json: every pair measured,
//     the launcher recorded as srun
//  2. unless MESH_SLURM_KILL=0: the same with g3's rank killed (SIGKILL) as
//     it starts its pair in round 2: the others finish, rank 0 exits 6 with
//     a partial document -> mesh-kill.json (srun's status in mesh-kill.rc,
//     rank 0's in mesh-kill.rank0)
//
// Each guest's Slurm and munge logs go to guests/gN/.
func TestSlurm(t *testing.T) {
	inBed(t)
	for _, c := range []string{"slurmctld", "slurmd", "srun", "sinfo", "scontrol", "munged", "/usr/sbin/slurmstepd", slurmPlugins + "/mpi_pmi2.so"} {
		if _, err := exec.LookPath(c); err != nil {
			if _, err := os.Stat(c); err != nil {
				t.Fatalf("%s not found: run scripts/install-deps.sh --launchers (Debian packages slurmctld slurmd slurm-client munge)", c)
			}
		}
	}
	b := newBed(t, vmtest.Binary(t))
	args := strings.Fields(expkit.Str("MESH_SLURM_ARGS", "--op send,write --mode lat,bw --size 4K -n 400 --round-timeout 120s"))
	kill := expkit.Str("MESH_SLURM_KILL", "1") != "0"

	key := make([]byte, 1024)
	rand.Read(key)
	keyEnv := mungeKeyEnv + "=" + base64.StdEncoding.EncodeToString(key)
	t.Cleanup(b.slurmLogs)
	self := expkit.Self(t)
	t0 := time.Now()
	node := exec.CommandContext(b.ctx, self, "1")
	node.Env = append(os.Environ(), expkit.HelperEnv+"=slurm-node", keyEnv)
	node.Stdout, node.Stderr = os.Stdout, os.Stderr
	if err := node.Run(); err != nil {
		t.Fatalf("g1: slurm node: %v", err)
	}
	for i, p := range b.peers {
		c := expkit.Helper(b.ctx, t, p, "slurm-node", strconv.Itoa(i+2))
		c.Env = append(c.Env, keyEnv)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			t.Fatalf("%s: slurm node: %v", p.Name, err)
		}
	}
	// the three slurmd registered and idle
	wctx, cancel := context.WithTimeout(b.ctx, 300*time.Second)
	defer cancel()
	for {
		o, _ := exec.CommandContext(wctx, "sinfo", "-h", "-t", "idle", "-o", "%D").Output()
		if strings.TrimSpace(string(o)) == "3" {
			break
		}
		select {
		case <-wctx.Done():
			o, _ := exec.Command("sinfo", "-N").CombinedOutput()
			t.Fatalf("MESH-FAIL the nodes are not idle after 300 s:\n%s", o)
		case <-time.After(500 * time.Millisecond):
		}
	}
	o, _ := exec.Command("sinfo", "-h", "-N", "-o", "%N %T").Output()
	fmt.Printf("MESH-SLURM cluster up after %s: %s\n", expkit.Since(t0), strings.Join(strings.Fields(string(o)), " "))

	rank0 := "/tmp/rank0.rc"
	srun := launcher{"srun", func(ctx context.Context, mesh []string) *exec.Cmd {
		c := exec.CommandContext(ctx, "srun", append([]string{"--mpi=pmi2", "-N", "3", "--ntasks-per-node=1", "--kill-on-bad-exit=0", self}, mesh...)...)
		c.Env = append(os.Environ(), expkit.HelperEnv+"=rank0rc", expkit.Rank0Env+"="+rank0)
		return c
	}}
	os.Remove(rank0)
	rc, _ := b.run(srun, "mesh", "mesh.txt", false, append(args, "--json", b.path("mesh.json"))...)
	if rc != 0 || !nonEmpty(b.path("mesh.json")) {
		t.Fatalf("MESH-SLURM FAIL: srun exit %d, mesh.json written: %v (Slurm logs: guests/g*/)", rc, nonEmpty(b.path("mesh.json")))
	}
	b.check("complete", b.path("mesh.json"), "3", "send,write", "launcher=slurm")
	if kill {
		os.Remove(rank0)
		b.killedRun(srun, "srun")
		r0, _ := os.ReadFile(rank0)
		expkit.WriteFile(t, b.out, "mesh-kill.rank0", r0)
		fmt.Printf("--- killed rank: rank 0 exit %s\n", strings.TrimSpace(string(r0)))
		if strings.TrimSpace(string(r0)) != "6" {
			t.Errorf("MESH-SLURM FAIL: rank 0 of the killed run exited %q, want 6", strings.TrimSpace(string(r0)))
		}
	}
	if !t.Failed() {
		fmt.Printf("mesh-slurm: passed in %s: mesh.json%s\n", expkit.Since(b.t0), map[bool]string{true: ", mesh-kill.json"}[kill])
	}
}

// slurmLogs copies each guest's Slurm and munge logs to guests/gN/.
func (b *bed) slurmLogs() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	logs := []string{"/tmp/slurm/slurmctld.log", "/tmp/slurm/slurmd.log", "/tmp/munge/munged.log"}
	for _, l := range logs {
		if data, err := os.ReadFile(l); err == nil {
			expkit.WriteFile(b.t, filepath.Join(b.out, "guests", "g1"), filepath.Base(l), data)
		}
	}
	for _, p := range b.peers {
		for _, l := range logs[1:] {
			if data, err := expkit.PeerFile(ctx, p, l); err == nil {
				expkit.WriteFile(b.t, filepath.Join(b.out, "guests", p.Name), filepath.Base(l), data)
			}
		}
	}
}
