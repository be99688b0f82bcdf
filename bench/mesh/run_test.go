package mesh

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// tcpSpecs is a short test list that needs no RDMA device: the kernel-TCP
// baseline, so the whole engine (bootstrap, servers, rounds, reports) runs
// on the host.
func tcpSpecs(t *testing.T) []spec.Spec {
	t.Helper()
	specs, err := spec.Plan{Template: spec.Spec{Transport: result.TransportTCP, Iters: 200},
		Ops: []string{result.OpSend}, Modes: []string{result.ModeLat, result.ModeBW}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// faults of a local run: ranks killed (as a process is) and ranks
// interrupted (as by SIGTERM), each after a delay from the start.
type faults struct {
	kill        map[int]string // rank → killed when its progress line has this
	interruptAt string         // every rank is interrupted when a progress line has this
	specs       []spec.Spec    // nil: tcpSpecs
}

// trigger calls fn (once) when a written line contains s.
type trigger struct {
	s    string
	once *sync.Once
	fn   func()
}

func (w trigger) Write(b []byte) (int, error) {
	if strings.Contains(string(b), w.s) {
		w.once.Do(w.fn)
	}
	return len(b), nil
}

// runLocal runs n ranks in this process.
func runLocal(t *testing.T, n int, pattern string, roundTimeout time.Duration, f faults) ([]*Outcome, []error) {
	t.Helper()
	bs := boot.NewLocal(n)
	outs := make([]*Outcome, n)
	errs := make([]error, n)
	specs := f.specs
	if specs == nil {
		specs = tcpSpecs(t)
	}
	all, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var once sync.Once
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(all, 2*time.Minute)
			defer cancel()
			cfg := Config{Boot: bs[r], Pattern: pattern, Specs: specs,
				Client:       bench.ClientConfig{Transport: result.TransportTCP, GIDIndex: -1},
				Net:          netip.MustParsePrefix("127.0.0.0/8"),
				RoundTimeout: roundTimeout, ConnTimeout: 5 * time.Second}
			if f.interruptAt != "" {
				cfg.Log = trigger{f.interruptAt, &once, interrupt}
			}
			if at, ok := f.kill[r]; ok {
				kill := make(chan struct{})
				cfg.kill = kill
				cfg.Log = trigger{at, &sync.Once{}, func() { close(kill) }}
			}
			outs[r], errs[r] = Run(ctx, cfg)
		}()
	}
	wg.Wait()
	return outs, errs
}

func TestRunTCPMesh(t *testing.T) {
	outs, errs := runLocal(t, 3, PatternPairs, 30*time.Second, faults{})
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
// run is partial, and nobody waits for the dead rank: its link closes, so
// the run takes far less than one round timeout more.
func TestRunRankDies(t *testing.T) {
	t0 := time.Now()
	outs, errs := runLocal(t, 4, PatternPairs, 20*time.Second, faults{kill: map[int]string{3: "round 2/3"}}) // as it starts 3 → 1
	if errs[3] == nil {
		t.Error("the dead rank returned no error")
	}
	for r := range 3 {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("took %v: a barrier or the report wait waited for the dead rank", d)
	}
	doc := outs[0].Doc
	if doc.Outcome != result.MeshPartial || !outs[0].Partial() {
		t.Fatalf("outcome %s, want partial", doc.Outcome)
	}
	for _, p := range doc.Pairs {
		// the dead rank's own pairs are lost with its report; the others
		// are measured (its server may have answered a test before it died)
		// 0 → 3 ran before the kill, 3 → 1 was cut, 2 → 3 found no server
		ok := p.Status == result.StatusOK
		if ok != (p.Client != 3 && (p.Server != 3 || p.Round == 0)) {
			t.Errorf("pair %s: %s (%s)", p.Name(), p.Status, p.Error)
		}
	}
	if doc.Ranks[3].Status != result.StatusLost || !strings.Contains(doc.Ranks[3].Error, "link to rank 0 closed") {
		t.Errorf("rank 3: %s (%s), want lost with a closed link", doc.Ranks[3].Status, doc.Ranks[3].Error)
	}
	if doc.UnsyncedFrom != -1 || len(doc.Warnings) != 0 {
		t.Errorf("unsynced from %d, warnings %q: the survivors' barriers must go on", doc.UnsyncedFrom, doc.Warnings)
	}
	if f := os.Getenv("RDMABENCH_MESH_FIXTURE"); f != "" { // bench/result/testdata/mesh_partial.json
		if err := result.WriteMeshJSON(f, doc); err != nil {
			t.Fatal(err)
		}
	}
}

// Every rank interrupted mid-run (the launcher's SIGTERM): the rounds stop,
// the reports still reach rank 0, and rank 0 returns a partial document
// with what was measured, at once.
func TestRunInterrupted(t *testing.T) {
	specs, err := spec.Plan{Template: spec.Spec{Transport: result.TransportTCP, Duration: 500 * time.Millisecond},
		Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	outs, errs := runLocal(t, 4, PatternPairs, 20*time.Second, faults{interruptAt: "round 2/3", specs: specs})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %v with an interrupt in round 2 of 3", d)
	}
	doc := outs[0].Doc
	if doc == nil || doc.Outcome != result.MeshPartial {
		t.Fatalf("rank 0's document: %+v, want a partial one", doc)
	}
	ok, notRun := 0, 0
	for _, p := range doc.Pairs {
		switch {
		case p.Status == result.StatusOK:
			ok++
		case strings.Contains(p.Error, "not run: the rank was interrupted"):
			notRun++
		}
	}
	if ok == 0 || notRun == 0 || len(doc.Pairs) != 6 {
		t.Errorf("%d pairs measured, %d not run of %d; want some of each", ok, notRun, len(doc.Pairs))
	}
	for _, r := range doc.Ranks {
		if r.Status == result.StatusLost {
			t.Errorf("rank %d lost (%s): an interrupted rank still reports", r.Rank, r.Error)
		}
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "interrupted (SIGINT or SIGTERM) in round 2 of 3") {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// An all-to-one run (ranks 1 and 2 into rank 0 at once, TCP) carries the
// incast fairness: per test both flows, and for the bandwidth test Jain's
// index over their bandwidth, as result.JainIndex computes it.
func TestRunTCPMeshAllToOneFairness(t *testing.T) {
	outs, errs := runLocal(t, 3, PatternAllToOne, 30*time.Second, faults{})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	doc := outs[0].Doc
	if doc == nil || len(doc.Fairness) != 2 {
		t.Fatalf("fairness %+v", doc)
	}
	bw := doc.Fairness[1]
	if bw.Mode != result.ModeBW || len(bw.Flows) != 2 || bw.Jain == nil || doc.Fairness[0].Jain != nil {
		t.Fatalf("fairness %+v", doc.Fairness)
	}
	want, _ := result.JainIndex([]float64{bw.Flows[0].MBPerSec, bw.Flows[1].MBPerSec})
	if *bw.Jain != want || !(want > 0.5 && want <= 1) {
		t.Errorf("Jain %g; want %g", *bw.Jain, want)
	}
}

// TestRunTCPMeshRails: two rails, rail after rail and at once: one
// document per rail, each with every pair of the schedule once, its rounds
// counted from 0.
func TestRunTCPMeshRails(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		bs := boot.NewLocal(3)
		outs := make([]*Outcome, 3)
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for r := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				outs[r], errs[r] = Run(ctx, Config{Boot: bs[r], Pattern: PatternPairs, Specs: tcpSpecs(t),
					Client: bench.ClientConfig{Transport: result.TransportTCP, GIDIndex: -1},
					Net:    netip.MustParsePrefix("127.0.0.0/8"), Rails: []string{"", ""}, RailsParallel: parallel,
					RoundTimeout: 30 * time.Second, ConnTimeout: 5 * time.Second})
			}()
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("parallel %v: rank %d: %v", parallel, r, err)
			}
		}
		o := outs[0]
		if len(o.Rails) != 2 || o.Doc != o.Rails[0] || o.Partial() {
			t.Fatalf("parallel %v: %d rail documents (doc is rail 0's: %v), partial %v; want 2", parallel, len(o.Rails), o.Doc == o.Rails[0], o.Partial())
		}
		for ri, doc := range o.Rails {
			if doc.Outcome != result.MeshComplete || len(doc.Pairs) != 3 || doc.Rounds != 3 || doc.UnsyncedFrom != -1 {
				t.Errorf("parallel %v rail %d: outcome %s, %d pairs, %d rounds, unsynced from %d; want complete, 3, 3, -1",
					parallel, ri, doc.Outcome, len(doc.Pairs), doc.Rounds, doc.UnsyncedFrom)
			}
			for i, p := range doc.Pairs {
				if p.Status != result.StatusOK || p.Round != i {
					t.Errorf("parallel %v rail %d: pair %s round %d: %s %q", parallel, ri, p.Name(), p.Round, p.Status, p.Error)
				}
			}
			if err := doc.Check(); err != nil {
				t.Errorf("parallel %v rail %d: %v", parallel, ri, err)
			}
		}
	}
}

// TestRailSteps: rail after rail, or each round on every rail at once.
func TestRailSteps(t *testing.T) {
	seq := railSteps(2, 2, false)
	if len(seq) != 4 || seq[1][0] != (railRound{0, 1}) || seq[2][0] != (railRound{1, 0}) {
		t.Errorf("sequential steps %v", seq)
	}
	par := railSteps(2, 3, true)
	if len(par) != 2 || len(par[1]) != 3 || par[1][2] != (railRound{2, 1}) {
		t.Errorf("parallel steps %v", par)
	}
	if one := railSteps(3, 1, false); len(one) != 3 || one[2][0] != (railRound{0, 2}) {
		t.Errorf("no rails: steps %v, want the rounds", one)
	}
}

// TestRailReports: a rail's pairs, their rounds from 0, and where the run
// became unsynchronised as a round of the rail.
func TestRailReports(t *testing.T) {
	reps := map[int]Report{1: {Rank: 1, UnsyncedFrom: 4, Pairs: []result.MeshPair{{Round: 0}, {Round: 2}, {Round: 3}, {Round: 5}}}}
	for _, c := range []struct {
		rail, unsynced int
		rounds         []int
	}{{0, -1, []int{0, 2}}, {1, 1, []int{0, 2}}} {
		got := railReports(reps, c.rail, 3, false)[1]
		var rounds []int
		for _, p := range got.Pairs {
			rounds = append(rounds, p.Round)
		}
		if got.UnsyncedFrom != c.unsynced || len(rounds) != len(c.rounds) || rounds[1] != c.rounds[1] {
			t.Errorf("rail %d: unsynced %d, rounds %v; want %d, %v", c.rail, got.UnsyncedFrom, rounds, c.unsynced, c.rounds)
		}
	}
	if got := railReports(map[int]Report{1: {UnsyncedFrom: 1}}, 1, 3, false)[1]; got.UnsyncedFrom != 0 {
		t.Errorf("unsynchronised in rail 0: rail 1 unsynced from %d, want 0 (all of it)", got.UnsyncedFrom)
	}
}
