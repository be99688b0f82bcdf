package compare

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// a2o is an all-to-one mesh of two senders into rank 0 whose bandwidth
// test gave the senders bw[0] and bw[1] MB/s.
func a2o(bw [2]float64) *result.MeshDocument {
	d := &result.MeshDocument{Pattern: "all-to-one"}
	for r, h := range []string{"a", "b", "c"} {
		d.Ranks = append(d.Ranks, result.MeshRank{Rank: r, Host: h})
	}
	for i, c := range []int{1, 2} {
		r := result.Result{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: 1000, Bandwidth: result.Bandwidth{MBPerSec: bw[i]}}
		d.Pairs = append(d.Pairs, result.MeshPair{Client: c, Server: 0, ClientHost: d.Ranks[c].Host, ServerHost: "a",
			Status: result.StatusOK, Results: []result.Result{r}})
	}
	d.Fairness = result.MeshFairnessOf(d)
	return d
}

// TestGateMeshFairness: with a bw limit the gate fails an all-to-one run
// whose Jain index fell by more than it (1000+1000 MB/s against 1800+200:
// the same total, one sender starved) and passes one within it.
func TestGateMeshFairness(t *testing.T) {
	base := a2o([2]float64{1000, 1000}) // Jain 1
	limits := map[string]float64{MetricBW: 0.5}
	// 1800, 200: Jain (2000)² / (2·(3240000+40000)) = 0.6098, -39 %: within 50 %
	g := GateMesh(base, a2o([2]float64{1800, 200}), map[string]float64{MetricBW: 0.95})
	if len(g.Fairness) != 0 {
		t.Errorf("within 95%%: %+v", g.Fairness)
	}
	g = GateMesh(base, a2o([2]float64{1800, 200}), map[string]float64{MetricBW: 0.30})
	if len(g.Fairness) != 1 || g.Fairness[0].New < 0.6097 || g.Fairness[0].New > 0.6099 || g.Fairness[0].Base != 1 {
		t.Fatalf("fairness %+v", g.Fairness)
	}
	var me *MeshRegressionError
	if err := g.Err(); !errors.As(err, &me) || !strings.Contains(err.Error(), "all-to-one write bw 64K fairness -39.0%") {
		t.Errorf("err %v", err)
	}
	if s := g.Fairness[0].Format(); s != "write bw 64K: Jain's fairness index 1.000 -> 0.610 (-39.0% < -30%)" {
		t.Errorf("format %q", s)
	}
	g = GateMesh(base, a2o([2]float64{1100, 950}), limits)
	if len(g.Fairness) != 0 || g.Err() != nil || g.Checked == 0 {
		t.Errorf("a fair run: %+v %v", g, g.Err())
	}
	if g := GateMesh(base, base, map[string]float64{MetricP99: 0.1}); len(g.Fairness) != 0 {
		t.Errorf("without a bw limit: %+v", g.Fairness)
	}
}
