package mesh

import (
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestHydraRankKilled runs this test binary as 3 mesh ranks (TCP tests, no
// RDMA device) under MPICH's mpiexec, one hydra proxy per rank, and rank 2
// kills itself with SIGKILL as it starts its pair in round 2 of 3: the case
// that once crashed hydra at the next PMI barrier. Rank 0 must write a
// partial document with rank 2 lost, its pair failed and the others
// measured, and the whole run must end promptly.
func TestHydraRankKilled(t *testing.T) {
	if os.Getenv("PMI_FD") != "" {
		return // a rank: TestHydraMeshRank does the work
	}
	mpiexec, err := exec.LookPath("mpiexec.hydra")
	if err != nil {
		t.Skip("mpiexec.hydra not installed (Debian package mpich)")
	}
	docPath := t.TempDir() + "/mesh.json"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, mpiexec, "-launcher", "fork", "-disable-auto-cleanup",
		"-hosts", "127.0.0.1,127.0.0.2,127.0.0.3", "-ppn", "1", "-np", "3",
		os.Args[0], "-test.run", "^TestHydraMeshRank$", "-test.v")
	cmd.Env = append(os.Environ(), "MESH_TEST_DOC="+docPath)
	out, err := cmd.CombinedOutput()
	took := time.Since(t0)
	if err == nil {
		t.Errorf("mpiexec exited 0 with a killed rank")
	}
	b, rerr := os.ReadFile(docPath)
	if rerr != nil {
		t.Fatalf("rank 0 wrote no document (mpiexec: %v):\n%s", err, out)
	}
	var doc result.MeshDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Outcome != result.MeshPartial || doc.Ranks[2].Status != result.StatusLost {
		t.Fatalf("outcome %s, rank 2 %s; want partial, lost:\n%s", doc.Outcome, doc.Ranks[2].Status, out)
	}
	for _, p := range doc.Pairs {
		// 1 → 2 ran before the kill, 2 → 0 was cut, 0 → 1 after it
		if ok := p.Status == result.StatusOK; ok != (p.Client != 2) {
			t.Errorf("pair %s: %s (%s)", p.Name(), p.Status, p.Error)
		}
	}
	if took > 30*time.Second {
		t.Errorf("took %v: something waited for the dead rank", took)
	}
	if !strings.Contains(string(out), "HYDRA-MESH-RANK0 partial") {
		t.Errorf("rank 0 did not finish:\n%s", out)
	}
}

// TestHydraMeshRank is one rank of TestHydraRankKilled.
func TestHydraMeshRank(t *testing.T) {
	if os.Getenv("PMI_FD") == "" {
		return // a helper process: TestHydraRankKilled runs it under mpiexec
	}
	b, err := boot.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := spec.Plan{Template: spec.Spec{Transport: result.TransportTCP, Duration: 300 * time.Millisecond},
		Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Boot: b, Pattern: PatternPairs, Specs: specs,
		Client: bench.ClientConfig{Transport: result.TransportTCP, GIDIndex: -1},
		Net:    netip.MustParsePrefix("127.0.0.0/8"), RoundTimeout: 20 * time.Second, ConnTimeout: 5 * time.Second}
	if b.Rank() == 2 {
		cfg.Log = trigger{"round 2/3", &sync.Once{}, func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }} //nolint:errcheck
	}
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Doc != nil {
		if err := result.WriteMeshJSON(os.Getenv("MESH_TEST_DOC"), out.Doc); err != nil {
			t.Fatal(err)
		}
		t.Logf("HYDRA-MESH-RANK0 %s", out.Doc.Outcome)
	}
}
