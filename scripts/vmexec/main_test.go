package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm"
)

// TestHostTurns: host test binaries under a bed take turns from it, one at a
// time, and a turn lasts until its holder hangs up.
func TestHostTurns(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "bed.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := newBedServer(bedFlags{})
	go s.serve(ln)
	defer ln.Close()

	var holders, most atomic.Int32
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			done, err := hostTurn(sock, "/bin/true")
			if err != nil {
				errs <- err
				return
			}
			n := holders.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
			holders.Add(-1)
			done()
			errs <- nil
		}()
	}
	for i := 0; i < 3; i++ {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("hostTurn: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a host turn never came: a turn was not handed back")
		}
	}
	if most.Load() != 1 {
		t.Fatalf("%d host turns at once, want 1", most.Load())
	}
}

// TestHostTurnNoBed: a host turn from a bed that is gone fails at once,
// naming the socket.
func TestHostTurnNoBed(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "gone.sock")
	if _, err := hostTurn(sock, "/bin/true"); err == nil || !strings.Contains(err.Error(), sock) {
		t.Fatalf("hostTurn to no bed: %v, want an error naming %s", err, sock)
	}
}

// TestStartAtNice0: the child starts at nice 0 where the host lets a nice
// be lowered (CAP_SYS_NICE, or RLIMIT_NICE), whatever this process's nice.
func TestStartAtNice0(t *testing.T) {
	if p := vm.ProbePriorities(); !p.Favour {
		t.Skipf("this host lets no nice be lowered (%+v): a host test binary runs at the bed's nice", p)
	}
	cmd := exec.Command("nice", "-n", "10", "sh", "-c", "exec \"$0\" -test.run='^TestNiceHelper$' -test.v", testBin(t))
	cmd.Env = append(cmd.Environ(), "VMEXEC_NICE_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	// the helper runs at 10 above this test's nice; its child must be at 0
	m := regexp.MustCompile(`own nice (\d+), child nice (-?\d+)`).FindStringSubmatch(string(out))
	if m == nil || m[1] == "0" || m[2] != "0" {
		t.Fatalf("child not at nice 0 (want 'own nice N>0, child nice 0'):\n%s", out)
	}
}

func testBin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestNiceHelper runs under nice 10 (TestStartAtNice0) and starts a child;
// run otherwise, it does nothing.
func TestNiceHelper(t *testing.T) {
	if os.Getenv("VMEXEC_NICE_HELPER") != "1" {
		return
	}
	own, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "cut -d' ' -f19 /proc/self/stat")
	var b strings.Builder
	cmd.Stdout = &b
	if err := startAtNice0(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("own nice %s, child nice %d", strings.Fields(string(own[strings.LastIndexByte(string(own), ')')+2:]))[16], n)
}

// TestAheadEnv: RDMABENCH_VM_AHEAD is checked before anything boots.
func TestAheadEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int // 0: a usage error
	}{{"", 3}, {"1", 1}, {"8", 8}, {"0", 0}, {"9", 0}, {"x", 0}} {
		t.Setenv("RDMABENCH_VM_AHEAD", c.v)
		b := bedFlags{boot: 300}
		err := b.finish()
		switch {
		case c.want == 0 && (err == nil || !strings.Contains(err.Error(), "RDMABENCH_VM_AHEAD")):
			t.Errorf("%q: %v, want a usage error naming RDMABENCH_VM_AHEAD", c.v, err)
		case c.want != 0 && (err != nil || b.ahead != c.want):
			t.Errorf("%q: ahead %d, %v; want %d", c.v, b.ahead, err, c.want)
		}
	}
}

// TestKeepBed: short runs that passed share a guest; a long one, or one that
// failed, ends it (reuseBelow).
func TestKeepBed(t *testing.T) {
	for _, c := range []struct {
		used   time.Duration
		passed bool
		want   bool
	}{
		{800 * time.Millisecond, true, true},
		{14 * time.Second, true, true},
		{15 * time.Second, true, false},
		{95 * time.Second, true, false},
		{time.Second, false, false},
	} {
		if got := keepBed(c.used, c.passed); got != c.want {
			t.Errorf("keepBed(%v, %v) = %v, want %v", c.used, c.passed, got, c.want)
		}
	}
}
