package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/exptool/meshcheck"
)

// The small mesh in the one guest: MPICH's mpiexec (hydra) launches the
// ranks locally (-launcher fork, no ssh), all on rxe0 and 127.0.0.1
// (--device-map rxe0, --net 127.0.0.0/8). Where rank 0's exit status
// matters it runs under a small sh wrapper that records it (hydra reports
// only the worst one); and each rank gets its own hydra proxy (-hosts
// 127.0.0.1,127.0.0.2,... -ppn 1), as on a real cluster: hydra's proxy kills
// every rank it runs when one of them dies by a signal.

var meshCommon = []string{"--net", "127.0.0.0/8", "--device-map", "rxe0"}

// mpiexec is MPICH's mpiexec.hydra, which the bed must have.
func mpiexec(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("mpiexec.hydra")
	if err != nil {
		t.Fatalf("mpiexec.hydra is not on PATH (%v): the bed has MPICH (Debian package mpich, scripts/install-deps.sh)", err)
	}
	if _, err := exec.LookPath("hydra_pmi_proxy"); err != nil {
		t.Fatalf("hydra_pmi_proxy is not on PATH (%v): the bed has MPICH", err)
	}
	return p
}

// rank0Wrapper writes an sh script that runs the rdmabench under test with
// its arguments and writes its exit status to rcFile (a trapped signal does
// not stop sh before it records the status).
func rank0Wrapper(t *testing.T, dir, rcFile string) string {
	t.Helper()
	p := filepath.Join(dir, "rank0.sh")
	s := fmt.Sprintf("trap : INT TERM\n%s \"$@\"\necho $? >%s\n", strconv.Quote(bin(t)), strconv.Quote(rcFile))
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// rank0RC is what the wrapper recorded.
func rank0RC(t *testing.T, rcFile string) string {
	t.Helper()
	b, err := os.ReadFile(rcFile)
	if err != nil {
		return fmt.Sprintf("none (%v)", err)
	}
	return strings.TrimSpace(string(b))
}

func readMesh(t *testing.T, path string) *result.MeshDocument {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := result.ParseMesh(b, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// TestMeshLocal: 3 ranks under one proxy, SEND and WRITE latency, 400
// iterations (p99 needs 368 samples): exit 0, every pair measured and
// judged against --expect-lat, local ranks 0..2 with their own ports, and
// the document passes the gate against itself.
func TestMeshLocal(t *testing.T) {
	b := bin(t)
	mpi := mpiexec(t)
	dir := jsonDir(t)
	js := filepath.Join(dir, "mesh.json")
	args := append([]string{"-launcher", "fork", "-np", "3", b, "mesh"}, meshCommon...)
	args = append(args, "--port", "18700", "--op", "send,write", "--mode", "lat", "-n", "400", "--round-timeout", "30s",
		"--connect-timeout", "10s", "--json", js, "--expect-lat", "p50=500ms")
	o := runEnv(t, 2*time.Minute, nil, mpi, args...)
	if o.Code != 0 {
		t.Fatalf("mesh run: %s", o)
	}
	wantOutput(t, "mesh stdout", o.Stdout, "): send lat 2B: p50 <= 500ms", " 0 fail, 0 cannot tell") // each pair judged
	d := readMesh(t, js)
	if err := meshcheck.Complete(&lineWriter{fn: func(l string) { t.Log(l) }}, d, 3, []string{"send", "write"}, []string{result.ModeLat}, 1); err != nil {
		t.Errorf("%s: %v", js, err)
	}
	if err := meshcheck.Local(&lineWriter{fn: func(l string) { t.Log(l) }}, d, 3, "rxe0", 18700); err != nil {
		t.Errorf("%s: %v", js, err)
	}
	if o := rb(t, "compare", "--baseline", js, js); o.Code != 0 {
		t.Errorf("the run against itself did not pass the gate: %s", o)
	}
}

// rankPIDs are the rdmabench processes whose environment has PMI_RANK=rank.
func rankPIDs(rank int) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "rdmabench" {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(env), "\x00"), "PMI_RANK="+strconv.Itoa(rank)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestMeshRankKilled: rank 2 killed (SIGKILL) as it starts its pair in round
// 2: rank 0 exits 6 with a partial document, rank 2 lost, its pairs failed,
// the others measured, in bounded time (nothing waits for the dead rank).
func TestMeshRankKilled(t *testing.T) {
	b := bin(t)
	mpi := mpiexec(t)
	dir := jsonDir(t)
	js := filepath.Join(dir, "kill.json")
	rc := filepath.Join(t.TempDir(), "rank0.rc")
	rank0 := rank0Wrapper(t, t.TempDir(), rc)
	// one SEND latency test of 0.3 s a pair (plus its setup): the kill lands in the pair
	mesh := append(append([]string{"mesh"}, meshCommon...), "--op", "send", "--mode", "lat", "-D", "300ms", "--round-timeout", "30s",
		"--connect-timeout", "10s", "--json", js)
	args := append([]string{"-launcher", "fork", "-disable-auto-cleanup", "-hosts", "127.0.0.1,127.0.0.2,127.0.0.3", "-ppn", "1",
		"-np", "1", "sh", rank0}, mesh...)
	args = append(append(args, ":", "-np", "2", b), mesh...)

	var mu sync.Mutex
	var killed []string
	once := sync.Once{}
	onLine := func(l string) {
		if strings.Contains(l, "mesh rank 2: round 2/3") {
			once.Do(func() {
				for _, pid := range rankPIDs(2) {
					if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
						mu.Lock()
						killed = append(killed, strconv.Itoa(pid))
						mu.Unlock()
					}
				}
			})
		}
	}
	t0 := time.Now()
	p := startEnv(t, 60*time.Second, nil, onLine, mpi, args...)
	code := p.wait(t, 90*time.Second)
	took := time.Since(t0)
	mu.Lock()
	t.Logf("killed rank 2 (pids %v); rank 0 exit %s, mpiexec exit %d, %v", killed, rank0RC(t, rc), code, took.Round(time.Millisecond))
	if len(killed) == 0 {
		mu.Unlock()
		t.Fatalf("rank 2 was not killed (no rdmabench with PMI_RANK=2 at %q): %s", "mesh rank 2: round 2/3", p)
	}
	mu.Unlock()
	if r := rank0RC(t, rc); r != "6" {
		t.Fatalf("rank 0 exit %s, want 6 (partial): %s", r, p)
	}
	if err := meshcheck.Killed(&lineWriter{fn: func(l string) { t.Log(l) }}, readMesh(t, js), 2); err != nil {
		t.Errorf("%s: %v", js, err)
	}
	if took > 30*time.Second {
		t.Errorf("the killed run took %v (> 30 s): something waited for the dead rank: %s", took, p)
	}
}

// qpRunning reports whether an rdmabench QP is in RTS (`rdma resource show qp`):
// a test is under way.
func qpRunning() bool {
	o, err := exec.Command("rdma", "resource", "show", "qp").Output()
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(o), "\n") {
		if strings.Contains(l, "state RTS") && strings.Contains(l, "comm rdmabench") {
			return true
		}
	}
	return false
}

// TestMeshSIGTERM: SIGTERM to mpiexec mid-run (2 ranks, one round): rank 0
// still writes a partial document and exits 6, in bounded time.
func TestMeshSIGTERM(t *testing.T) {
	b := bin(t)
	mpi := mpiexec(t)
	dir := jsonDir(t)
	js := filepath.Join(dir, "term.json")
	rc := filepath.Join(t.TempDir(), "rank0.rc")
	rank0 := rank0Wrapper(t, t.TempDir(), rc)
	mesh := append(append([]string{"mesh"}, meshCommon...), "--op", "send", "--mode", "lat", "-D", "3s", "--round-timeout", "30s", "--json", js)
	args := append([]string{"-launcher", "fork", "-disable-auto-cleanup", "-hosts", "127.0.0.1,127.0.0.2", "-ppn", "1",
		"-np", "1", "sh", rank0}, mesh...)
	args = append(append(args, ":", "-np", "1", b), mesh...)
	t0 := time.Now()
	p := startEnv(t, 2*time.Minute, nil, nil, mpi, args...)
	if !poll(30*time.Second, func() bool { return strings.Contains(p.stderr.String(), "round 1/1") || p.exited() }) || p.exited() {
		t.Fatalf("no round 1/1 within 30 s: %s", p)
	}
	// mid-run: the pair's QPs connected (its test under way), not in setup
	if !poll(30*time.Second, func() bool { return qpRunning() || p.exited() }) || p.exited() {
		t.Fatalf("no rdmabench QP in RTS within 30 s of round 1/1: %s", p)
	}
	code := p.stop(t, syscall.SIGTERM)
	t.Logf("SIGTERM: rank 0 exit %s, mpiexec exit %d, %v", rank0RC(t, rc), code, time.Since(t0).Round(time.Millisecond))
	if r := rank0RC(t, rc); r != "6" {
		t.Fatalf("rank 0 exit %s, want 6 (partial) after SIGTERM: %s", r, p)
	}
	v := readAny(t, js)
	if get(v, "outcome") != "partial" || !anyString(v, "interrupted (SIGINT or SIGTERM)") {
		t.Errorf("%s: outcome %v, want partial, a value saying %q", js, get(v, "outcome"), "interrupted (SIGINT or SIGTERM)")
	}
}

// TestMeshLocalRails: 3 ranks in the one guest with two rails, rxe0 and
// rxe1 (--rail-devices; --net 127.0.0.0/8): rank 0 prints a section per
// rail and writes one complete document per rail, each rank on that
// rail's device.
func TestMeshLocalRails(t *testing.T) {
	b := bin(t)
	mpi := mpiexec(t)
	dir := jsonDir(t)
	js := filepath.Join(dir, "rails.json")
	args := []string{"-launcher", "fork", "-np", "3", b, "mesh", "--net", "127.0.0.0/8", "--rail-devices", "rxe0,rxe1",
		"--port", "18770", "--op", "write", "--mode", "bw", "-n", "200", "--round-timeout", "30s", "--connect-timeout", "10s", "--json", js}
	o := runEnv(t, 3*time.Minute, nil, mpi, args...)
	if o.Code != 0 {
		t.Fatalf("mesh --rail-devices rxe0,rxe1: %s", o)
	}
	for r, dev := range []string{"rxe0", "rxe1"} {
		wantOutput(t, "mesh's output", o.Stdout, fmt.Sprintf("== rail %d: ", r))
		path := filepath.Join(dir, fmt.Sprintf("rails.rail%d.json", r))
		d := readMesh(t, path)
		if err := meshcheck.Complete(&lineWriter{fn: func(l string) { t.Log(l) }}, d, 3, []string{"write"}, []string{result.ModeBW}, 1); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		for _, p := range d.Pairs {
			if p.Env == nil || p.Env.Device != dev {
				t.Errorf("%s: pair %s measured on %v, want %s", path, p.Name(), p.Env, dev)
			}
		}
	}
}
