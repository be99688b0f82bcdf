//go:build experiment

package mesh

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/exptool/meshcheck"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

func init() { vmtest.Layout(vmtest.Mesh) }

func TestMain(m *testing.M) { expkit.Main(m) }

// meshNet is the control network the ranks bind to.
const meshNet = "198.51.100.0/24"

// bed is the three guests as one experiment sees them.
type bed struct {
	t     *testing.T
	ctx   context.Context
	peers []vmtest.Peer // g2, g3
	hosts []string      // the guests' addresses, g1 first: rank i in guest i+1
	bin   string        // the rdmabench the ranks run
	out   string
	t0    time.Time
}

// inBed skips the test outside the mesh bed.
func inBed(t *testing.T) {
	if !vmtest.InGuest() {
		t.Skip("runs in the mesh bed: make mesh-test, mesh-demo, mesh-slurm, mesh-ompi")
	}
}

func newBed(t *testing.T, bin string) *bed {
	inBed(t)
	b := &bed{t: t, peers: vmtest.Peers(t), bin: bin, out: expkit.Out(t), t0: time.Now()}
	if len(b.peers) != 2 {
		t.Fatalf("want 3 guests, have %d", len(b.peers)+1)
	}
	b.hosts = []string{os.Getenv(vmtest.AddrEnv)}
	for _, p := range b.peers {
		b.hosts = append(b.hosts, p.Addr)
	}
	b.ctx = expkit.Context(t, expkit.Seconds(t, "MESH_TIMEOUT", 1800))
	return b
}

// launcher makes the command that starts 'BIN mesh ARGS' on every guest.
type launcher struct {
	name string
	cmd  func(ctx context.Context, mesh []string) *exec.Cmd
}

// hydra is MPICH's mpiexec, its remote shell the rsh helper.
func (b *bed) hydra() launcher {
	self := expkit.Self(b.t)
	return launcher{"mpiexec", func(ctx context.Context, mesh []string) *exec.Cmd {
		c := exec.CommandContext(ctx, "mpiexec.hydra", append([]string{"-launcher", "ssh", "-launcher-exec", self,
			"-hosts", strings.Join(b.hosts, ","), "-iface", "eth0", "-disable-auto-cleanup",
			"-ppn", "1", "-np", fmt.Sprint(len(b.hosts))}, mesh...)...)
		c.Env = append(os.Environ(), expkit.HelperEnv+"=rsh")
		return c
	}}
}

// meshArgs is 'BIN mesh --net NET' and args.
func (b *bed) meshArgs(args ...string) []string {
	return append([]string{b.bin, "mesh", "--net", meshNet}, args...)
}

// run launches one mesh with l: its matrix (stdout) to txt; its progress
// (stderr) streams to the console. With kill, rank 2 (in g3) is killed
// with SIGKILL as it starts its pair in round 2 (its progress line). It
// returns the launcher's exit status and its stderr.
func (b *bed) run(l launcher, label, txt string, kill bool, args ...string) (int, string) {
	t0 := time.Now()
	f, err := os.Create(filepath.Join(b.out, txt))
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	progress := &expkit.Lines{W: os.Stdout}
	cmd := l.cmd(b.ctx, b.meshArgs(args...))
	cmd.Stdout, cmd.Stderr = f, progress
	cmd.WaitDelay = 30 * time.Second
	round2 := progress.Contains("mesh rank 2: round 2/")
	if err := cmd.Start(); err != nil {
		b.t.Fatalf("%s: %v", l.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	killed := make(chan struct{})
	if kill {
		go func() {
			defer close(killed)
			if _, err := expkit.Await(b.ctx, round2, done, "rank 2's round 2"); err != nil {
				b.t.Errorf("killing rank 2: %v", err)
				return
			}
			b.killRank(b.peers[1])
		}()
	} else {
		close(killed)
	}
	<-done
	<-killed
	rc := cmd.ProcessState.ExitCode()
	if rc < 0 {
		rc = 128 + 9 // killed at the deadline
	}
	text, _ := os.ReadFile(f.Name())
	fmt.Printf("%s", text)
	fmt.Printf("MESH-RUN %s %s exit %d after %s\n", label, l.name, rc, expkit.Since(t0))
	return rc, progress.String()
}

// killRank kills the rank in guest g with SIGKILL.
func (b *bed) killRank(g vmtest.Peer) {
	name := filepath.Base(b.bin)
	out, err := expkit.Command(b.ctx, g, "pidof", name).Output()
	pids := strings.Fields(string(out))
	if err != nil || len(pids) == 0 {
		b.t.Errorf("%s: no rank to kill (pidof %s: %v)", g.Name, name, err)
		return
	}
	if err := expkit.Command(b.ctx, g, "kill", append([]string{"-9"}, pids...)...).Run(); err != nil {
		b.t.Errorf("%s: kill -9 %v: %v", g.Name, pids, err)
		return
	}
	fmt.Printf("%s: killed rank 2 (pid %s, SIGKILL) as it starts round 2\n", g.Name, strings.Join(pids, " "))
}

// check runs a meshcheck check, failing the test on an error.
func (b *bed) check(args ...string) {
	b.t.Helper()
	if err := meshcheck.Run(os.Stdout, args...); err != nil {
		b.t.Fatalf("meshcheck %s: %v", strings.Join(args, " "), err)
	}
}

// rdmabench runs the binary on this guest (compare, plot) and returns its
// exit status and output.
func (b *bed) rdmabench(args ...string) (int, string) {
	var o bytes.Buffer
	c := exec.CommandContext(b.ctx, b.bin, args...)
	c.Stdout, c.Stderr = &o, &o
	err := c.Run()
	if err != nil && c.ProcessState == nil {
		b.t.Fatalf("rdmabench %s: %v", strings.Join(args, " "), err)
	}
	return c.ProcessState.ExitCode(), o.String()
}

func (b *bed) path(name string) string { return filepath.Join(b.out, name) }

func nonEmpty(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

// TestMesh is make mesh-test: MPICH's mpiexec in g1 launches 'rdmabench mesh'
// on the three guests, 3 ranks, the pairs pattern, SEND and WRITE latency and
// bandwidth, a few hundred iterations (MESH_TEST_ARGS). Then the matrix:
// every pair measured across hosts, schema-valid JSON, and the document
// passes the gate against itself. mesh.json, mesh.txt, gate-self.txt.
func TestMesh(t *testing.T) {
	inBed(t)
	b := newBed(t, vmtest.Binary(t))
	args := strings.Fields(expkit.Str("MESH_TEST_ARGS", "--op send,write --mode lat,bw --size 4K -n 300 --round-timeout 60s"))
	rc, _ := b.run(b.hydra(), "mesh", "mesh.txt", false, append(args, "--json", b.path("mesh.json"))...)
	if rc != 0 || !nonEmpty(b.path("mesh.json")) {
		t.Fatalf("MESH-TEST FAIL: mpiexec exit %d, mesh.json written: %v", rc, nonEmpty(b.path("mesh.json")))
	}
	b.check("complete", b.path("mesh.json"), "3", "send,write")
	grc, gate := b.rdmabench("compare", "--baseline", b.path("mesh.json"), b.path("mesh.json"))
	expkit.WriteFile(t, b.out, "gate-self.txt", []byte(gate))
	if grc != 0 {
		t.Fatalf("MESH-TEST FAIL: the run against itself did not pass the gate (exit %d):\n%s", grc, gate)
	}
	fmt.Printf("mesh: passed, %s wall in the guests\n", expkit.Since(b.t0))
}

// TestDemo is make mesh-demo: MPICH's mpiexec launches on the three guests
//  1. the pairs mesh (MESH_DEMO_ARGS): SEND and WRITE, latency (4000
//     iterations, so p99.9 is backed) and bandwidth -> mesh.json,
//     heatmap.svg (SEND latency), heatmap-write-bw.svg
//  2. the same mesh (MESH_KILL_ARGS, --device-map rxe2, --round-timeout
//     KILL_ROUND_TIMEOUT) with g3's rank killed (SIGKILL) as it starts its
//     pair in round 2: the others finish, its pair is failed, rank 0 ends
//     partial (exit 6) -> mesh-kill.json
//  3. the gate: the run against itself exits 0; against a copy where one
//     pair's p99 is raised 20 % (mesh-raised.json) it names that pair and
//     exits 1 (gate-raised.txt).
func TestDemo(t *testing.T) {
	inBed(t)
	b := newBed(t, vmtest.Binary(t))
	args := strings.Fields(expkit.Str("MESH_DEMO_ARGS", "--op send,write --mode lat,bw --size 4K -n 4000 --round-timeout 300s"))
	l := b.hydra()
	rc, _ := b.run(l, "mesh", "mesh.txt", false, append(args, "--json", b.path("mesh.json"))...)
	if !nonEmpty(b.path("mesh.json")) {
		t.Fatalf("MESH-DEMO FAIL: no mesh.json (mpiexec exit %d)", rc)
	}
	b.check("complete", b.path("mesh.json"), "3", "send,write")
	for _, h := range [][]string{{"send", "lat", "heatmap.svg"}, {"write", "bw", "heatmap-write-bw.svg"}} {
		if prc, o := b.rdmabench("plot", b.path("mesh.json"), "--kind", "heatmap", "--op", h[0], "--mode", h[1], "-o", b.path(h[2])); prc != 0 {
			t.Errorf("plot %s: exit %d: %s", h[2], prc, o)
		}
	}
	b.killedRun(l, "mpiexec")
	b.gate()
	fmt.Printf("mesh-demo: done in %s: mesh.json, heatmap.svg, mesh-kill.json\n", expkit.Since(b.t0))
}

// killedRun is the run with rank 2 killed: mesh-kill.json partial, rank 2
// lost, the launcher's status nonzero, rank 0's own exit 6 ("mesh partial").
func (b *bed) killedRun(l launcher, what string) (rc int, stderr string) {
	t := b.t
	args := strings.Fields(expkit.Str("MESH_KILL_ARGS", "--op send,write --mode lat,bw --size 4K -n 200"))
	args = append(args, "--device-map", "rxe2", "--round-timeout", expkit.Str("KILL_ROUND_TIMEOUT", "90s"), "--json", b.path("mesh-kill.json"))
	fmt.Println("--- killed rank")
	rc, stderr = b.run(l, "mesh-kill", "mesh-kill.txt", true, args...)
	expkit.WriteFile(t, b.out, "mesh-kill.rc", []byte(fmt.Sprintln(rc)))
	if !nonEmpty(b.path("mesh-kill.json")) {
		t.Fatalf("FAIL: no mesh-kill.json (%s exit %d)", what, rc)
	}
	b.check("killed", b.path("mesh-kill.json"), "2")
	if rc == 0 {
		t.Errorf("FAIL: %s of the killed run exited 0", what)
	}
	if !strings.Contains(stderr, "rdmabench: mesh partial: ") {
		t.Errorf("FAIL: rank 0 did not end partial (exit 6)")
	}
	return rc, stderr
}

// gate: the run against itself passes; one pair's p99 raised 20 % fails.
func (b *bed) gate() {
	t := b.t
	fmt.Println("--- gate: the run against itself")
	rc, o := b.rdmabench("compare", "--baseline", b.path("mesh.json"), b.path("mesh.json"))
	ls := strings.Split(strings.TrimSpace(o), "\n")
	fmt.Println(ls[len(ls)-1])
	if rc != 0 {
		t.Errorf("gate against itself: exit %d:\n%s", rc, o)
	}
	fmt.Println("--- gate: one pair's p99 raised 20 %")
	b.check("raise", b.path("mesh.json"), b.path("mesh-raised.json"), "1", "1.2")
	rc, o = b.rdmabench("compare", "--baseline", b.path("mesh.json"), b.path("mesh-raised.json"))
	expkit.WriteFile(t, b.out, "gate-raised.txt", []byte(o))
	for _, l := range strings.Split(o, "\n") {
		if strings.Contains(strings.ToLower(l), "regression") {
			fmt.Println(l)
		}
	}
	if rc != 1 {
		t.Errorf("gate against the raised copy: exit %d, want 1:\n%s", rc, o)
	}
}
