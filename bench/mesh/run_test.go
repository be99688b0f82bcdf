package mesh

import (
	"context"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// tcpSpecs is a short test list that needs no RDMA device: the kernel-TCP
// baseline, so the whole engine (bootstrap, servers, rounds, reports) runs
// on the host.
func tcpSpecs(t *testing.T) []bench.Spec {
	t.Helper()
	specs, err := bench.Plan{Template: bench.Spec{Transport: result.TransportTCP, Iters: 200},
		Ops: []string{result.OpSend}, Modes: []string{result.ModeLat, result.ModeBW}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// runLocal runs n ranks in this process; kill(rank) returns a context to
// cancel that rank with (nil: none).
func runLocal(t *testing.T, n int, pattern string, roundTimeout time.Duration, die map[int]time.Duration) ([]*Outcome, []error) {
	t.Helper()
	bs := boot.NewLocal(n)
	outs := make([]*Outcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if d, ok := die[r]; ok {
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			outs[r], errs[r] = Run(ctx, Config{Boot: bs[r], Pattern: pattern, Specs: tcpSpecs(t),
				Client:       bench.ClientConfig{Transport: result.TransportTCP, GIDIndex: -1},
				Net:          netip.MustParsePrefix("127.0.0.0/8"),
				RoundTimeout: roundTimeout, ConnTimeout: 5 * time.Second})
		}()
	}
	wg.Wait()
	return outs, errs
}

func TestRunTCPMesh(t *testing.T) {
	outs, errs := runLocal(t, 3, PatternPairs, 30*time.Second, nil)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	doc := outs[0].Doc
	if doc == nil || outs[1].Doc != nil {
		t.Fatal("rank 0 (only) must have the document")
	}
	if doc.Outcome != result.MeshComplete || len(doc.Pairs) != 3 || doc.Rounds != 3 || doc.UnsyncedFrom != -1 {
		t.Fatalf("outcome %s, %d pairs, %d rounds, unsynced from %d; want complete, 3, 3, -1", doc.Outcome, len(doc.Pairs), doc.Rounds, doc.UnsyncedFrom)
	}
	for _, p := range doc.Pairs {
		if p.Status != result.StatusOK || len(p.Results) != 2 || p.Results[0].Histogram == "" {
			t.Errorf("pair %s: %s %q, %d results", p.Name(), p.Status, p.Error, len(p.Results))
		}
	}
	for _, r := range doc.Ranks {
		if r.Status != result.StatusOK || r.LocalRank != r.Rank || len(r.Ports) != 1 || r.Addr != "127.0.0.1" {
			t.Errorf("rank %+v", r)
		}
	}
	for r, o := range outs {
		if o.Partial() {
			t.Errorf("rank %d: partial", r)
		}
	}
}

// A rank that dies mid-run: the others finish, its pairs are failed, the
// run is partial, and nothing waits much past the round timeout.
func TestRunRankDies(t *testing.T) {
	t0 := time.Now()
	outs, errs := runLocal(t, 4, PatternPairs, 3*time.Second, map[int]time.Duration{3: 100 * time.Millisecond})
	if errs[3] == nil {
		t.Error("the dead rank returned no error")
	}
	for r := range 3 {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
	}
	if d := time.Since(t0); d > 25*time.Second {
		t.Errorf("took %v", d)
	}
	doc := outs[0].Doc
	if doc.Outcome != result.MeshPartial || !outs[0].Partial() {
		t.Fatalf("outcome %s, want partial", doc.Outcome)
	}
	for _, p := range doc.Pairs {
		// the dead rank's own pairs are lost with its report; the others
		// are measured (its server may have answered a test before it died)
		ok := p.Status == result.StatusOK
		if (p.Client == 3 && ok) || (p.Client != 3 && p.Server != 3 && !ok) {
			t.Errorf("pair %s: %s (%s)", p.Name(), p.Status, p.Error)
		}
	}
	if doc.Ranks[3].Status != result.StatusLost {
		t.Errorf("rank 3: %s, want lost", doc.Ranks[3].Status)
	}
	if f := os.Getenv("RDMABENCH_MESH_FIXTURE"); f != "" { // bench/result/testdata/mesh_partial.json
		if err := result.WriteMeshJSON(f, doc); err != nil {
			t.Fatal(err)
		}
	}
}
