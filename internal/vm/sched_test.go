package vm

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// prioChildEnv marks the test binary run again without CAP_SYS_NICE.
const prioChildEnv = "RDMABENCH_VM_PRIO_CHILD"

// TestIdleThenFavour: a process put idle for a boot ahead and favoured at its
// turn ends under SCHED_NORMAL, at GuestNice where the host allows it, else
// at this process's nice; and again in a process without CAP_SYS_NICE
// (setpriv, where this host can drop it), where Linux lets no thread leave
// SCHED_IDLE (a container's root often runs so: its beds booted ahead stayed
// idle through their turn, and their tests starved).
func TestIdleThenFavour(t *testing.T) {
	if os.Getenv(prioChildEnv) == "" && os.Geteuid() == 0 {
		if sp, err := exec.LookPath("setpriv"); err == nil {
			t.Run("without CAP_SYS_NICE", func(t *testing.T) {
				cmd := exec.Command(sp, "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice",
					os.Args[0], "-test.run=^TestIdleThenFavour$", "-test.v", "-test.count=1")
				cmd.Env = append(os.Environ(), prioChildEnv+"=1")
				out, err := cmd.CombinedOutput()
				if err != nil && strings.Contains(string(out), "setpriv:") {
					t.Skipf("this host cannot drop CAP_SYS_NICE: %s", out)
				}
				if err != nil {
					t.Fatalf("without CAP_SYS_NICE: %v\n%s", err, out)
				}
				t.Logf("%s", out)
			})
		}
	}
	p := ProbePriorities()
	t.Logf("priorities %+v; note %q", p, p.Note())
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	pid := sleep.Process.Pid

	idle(pid)
	want := uint32(unix.SCHED_IDLE)
	if !p.Unidle {
		want = unix.SCHED_BATCH
	}
	if a, err := unix.SchedGetAttr(pid, 0); err != nil || a.Policy != want {
		t.Errorf("after idle: policy %+v (%v), want %d", a, err, want)
	}
	favour(pid)
	if bad := unfavoured(pid); len(bad) > 0 {
		t.Fatalf("after favour: threads %v outside SCHED_NORMAL (%+v)", bad, p)
	}
	nice := p.Nice
	if p.Favour {
		nice = GuestNice
	}
	if a, err := unix.SchedGetAttr(pid, 0); err != nil || int(a.Nice) != nice {
		t.Errorf("after favour: %+v (%v), want nice %d", a, err, nice)
	}
}
