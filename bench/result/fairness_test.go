package result_test

import (
	"math"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestJainIndex checks Jain's index against hand computations of
// (Σx)² / (n·Σx²).
func TestJainIndex(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
		ok   bool
	}{
		{[]float64{5, 5, 5, 5}, 1, true},           // 400 / (4·100)
		{[]float64{1, 0, 0, 0}, 0.25, true},        // 1 / (4·1): one sender took all
		{[]float64{10, 20}, 0.9, true},             // 900 / (2·500)
		{[]float64{3, 1, 2}, 36.0 / 42, true},      // 36 / (3·14)
		{[]float64{100, 50, 50, 0}, 2.0 / 3, true}, // 200² / (4·(10000+2500+2500))
		{[]float64{7}, 0, false},
		{[]float64{0, 0}, 0, false},
		{[]float64{1, -1}, 0, false},
		{[]float64{1, math.NaN()}, 0, false},
	} {
		got, ok := result.JainIndex(c.xs)
		if ok != c.ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("JainIndex(%v) = %g, %v; want %g, %v", c.xs, got, ok, c.want, c.ok)
		}
	}
}

// TestMeshFairness: the all-to-one fixture (two senders into rank 0, made
// from a real 3-rank run's pairs) holds per test each flow's bandwidth and
// p99 and, for the bandwidth test, Jain's index as computed by hand from
// the two flows' bandwidths; result.MeshFairnessOf computes the same, leaves out
// failed pairs and pairs into other ranks, and nothing for other patterns.
func TestMeshFairness(t *testing.T) {
	d, err := result.ReadMeshFile("testdata/mesh_all_to_one.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateMeshDocument(readFile(t, "testdata/mesh_all_to_one.json")); err != nil {
		t.Fatal(err)
	}
	// by hand: flows of 1875.2287 and 1305.6369 MB/s
	a, b := 1875.2287309214446, 1305.6368944425562
	hand := (a + b) * (a + b) / (2 * (a*a + b*b)) // 0.96893
	for name, fs := range map[string][]result.MeshFairness{"fixture": d.Fairness, "computed": result.MeshFairnessOf(d)} {
		if len(fs) != 2 || fs[0].Mode != result.ModeLat || fs[0].Jain != nil || fs[1].Mode != result.ModeBW || fs[1].Jain == nil {
			t.Fatalf("%s: %+v", name, fs)
		}
		if math.Abs(*fs[1].Jain-hand) > 1e-9 || math.Abs(hand-0.96893) > 1e-5 {
			t.Errorf("%s: Jain %g; by hand %g", name, *fs[1].Jain, hand)
		}
		f := fs[1].Flows
		if len(f) != 2 || f[0].Client != 1 || f[0].MBPerSec != a || f[1].Client != 2 || f[1].P99.NS != 602111 || !fs[0].Flows[0].P99.OK {
			t.Errorf("%s: flows %+v", name, f)
		}
	}
	d.Pairs[0].Status = result.StatusFailed
	if fs := result.MeshFairnessOf(d); len(fs[1].Flows) != 1 || fs[1].Jain != nil {
		t.Errorf("with a failed pair: %+v", fs)
	}
	d.Root = 2
	if fs := result.MeshFairnessOf(d); len(fs) != 0 {
		t.Errorf("no pair into root 2: %+v", fs)
	}
	d.Pattern = "pairs"
	if fs := result.MeshFairnessOf(d); fs != nil {
		t.Errorf("pairs pattern: %+v", fs)
	}
}
