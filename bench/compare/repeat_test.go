package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// repeatedDoc is a document with one SEND latency test run k times; each
// run's samples are exponential around base ns, times scale.
func repeatedDoc(t *testing.T, seed uint64, k int, scale float64) *result.Document {
	r := rand.New(rand.NewPCG(seed, 7))
	var runs []result.Result
	for i := 0; i < k; i++ {
		h := hist.New()
		for j := 0; j < 2000; j++ {
			h.Record(int64((10000 + 3000*r.ExpFloat64()) * scale))
		}
		res := result.Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: 2000, DurationNS: 1e9}
		if err := res.SetLatency(h, 1); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, res)
	}
	c, err := result.CombineRuns(runs)
	if err != nil {
		t.Fatal(err)
	}
	return &result.Document{Results: []result.Result{c}}
}

func TestGateRepeated(t *testing.T) {
	base := repeatedDoc(t, 1, 5, 1)
	limits := map[string]float64{"p99": 0.10, "p50": 0.10}
	same := GateAlpha(base, repeatedDoc(t, 2, 5, 1), limits, 0.05)
	if len(same.Regressions) != 0 || len(same.Changes) != 2 {
		t.Fatalf("same: regressions %v, changes %v", same.Regressions, same.Changes)
	}
	for _, c := range same.Changes {
		if !strings.HasSuffix(c.FormatChange("MiB", 0.05), " ~)") {
			t.Errorf("an unchanged run is significant: %s", c.FormatChange("MiB", 0.05))
		}
	}
	worse := GateAlpha(base, repeatedDoc(t, 3, 5, 1.3), limits, 0.05)
	if len(worse.Regressions) != 2 {
		t.Fatalf("30 %% slower: regressions %v", worse.Regressions)
	}
	if s := worse.Regressions[0].Format("MiB"); !strings.Contains(s, "p=0.008") {
		t.Errorf("regression line lacks the p-value: %s", s)
	}
	// 3 runs against 3 cannot reach p < 0.05: noted, and nothing regresses
	few := GateAlpha(repeatedDoc(t, 1, 3, 1), repeatedDoc(t, 3, 3, 1.3), limits, 0.05)
	if len(few.Regressions) != 0 || !strings.Contains(strings.Join(few.Notes, "\n"), "cannot reach p < 0.05") {
		t.Errorf("3 vs 3 runs: regressions %v, notes %v", few.Regressions, few.Notes)
	}
	single := Gate(repeatedDoc(t, 1, 1, 1), repeatedDoc(t, 2, 1, 1), limits)
	if len(single.Changes) != 0 || !strings.Contains(strings.Join(single.Notes, "\n"), "cannot judge noise") {
		t.Errorf("single runs: changes %v, notes %v", single.Changes, single.Notes)
	}
}

func TestNoise(t *testing.T) {
	n := Noise([]*result.Document{repeatedDoc(t, 1, 8, 1)}, []string{"p50", "p99"})
	if len(n.Figures) != 2 || n.Figures[0].Runs != 8 {
		t.Fatalf("figures %+v", n.Figures)
	}
	var b strings.Builder
	if err := n.Write(&b, "MiB"); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if !strings.Contains(b.String(), "--max-regress p50=") || n.Suggested["p99"] < n.Suggested["p50"] {
		t.Errorf("suggestions %v:\n%s", n.Suggested, b.String())
	}
}
