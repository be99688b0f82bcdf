package compare

import (
	"math"
	"slices"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		p, u float64 // p within a relative 1e-4 (1e-7 for p below 1e-3)
	}{
		// fully separated 5 vs 5: the smallest p, 2/252
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252, 0},
		{"separated reversed", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252, 25},
		// interleaved: no evidence; 2*P(U <= 10) = 2*87/252 (R's wilcox.test: 0.6905)
		{"interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 174.0 / 252, 10},
		// 3 vs 3 separated: 2/20, never below 0.05
		{"three each", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1, 0},
		// with ties, exact given the ties (benchmath): U = 0 only when x
		// holds the three lowest tie groups whole, 1 of C(12,6) = 924
		// arrangements; two-sided 2/924. (The normal approximation, which
		// rdmabench took before: 0.00448.)
		{"ties", []float64{1, 2, 2, 3, 3, 3}, []float64{4, 4, 5, 5, 6, 6}, 2.0 / 924, 0},
		// ties beyond 25 a side: the normal approximation with tie and
		// continuity corrections; mean 338, tie sum 21918, variance
		// 676/12*(53-21918/2652) = 2520.1, z = (338-84.5-0.5)/50.20 = 5.040
		{"ties 26 each", append(slices.Repeat([]float64{1}, 13), slices.Repeat([]float64{2}, 13)...),
			append(slices.Repeat([]float64{2}, 13), slices.Repeat([]float64{3}, 13)...), 4.66e-7, 84.5},
		{"all equal", []float64{1, 1, 1}, []float64{1, 1}, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, u, ok := MannWhitney(tc.x, tc.y)
			if !ok {
				t.Fatal("not ok")
			}
			if math.Abs(p-tc.p) > 1e-4*max(tc.p, 1e-3) || u != tc.u {
				t.Errorf("p %.5f U %g, want p %.5f U %g", p, u, tc.p, tc.u)
			}
		})
	}
	if _, _, ok := MannWhitney(nil, []float64{1}); ok {
		t.Error("an empty side gave a p-value")
	}
}

// TestUCounts: the distribution sums to C(n+m, n) and is symmetric.
func TestUCounts(t *testing.T) {
	c := uCounts(4, 6)
	var sum float64
	for k := range c {
		sum += c[k]
		if c[k] != c[len(c)-1-k] {
			t.Fatalf("not symmetric at %d: %v", k, c)
		}
	}
	if sum != 210 {
		t.Errorf("sum %g, want C(10,4) = 210", sum)
	}
	if p := MinP(5, 5); math.Abs(p-2.0/252) > 1e-12 {
		t.Errorf("MinP(5,5) = %g", p)
	}
}

func BenchmarkMannWhitney(b *testing.B) {
	x := []float64{10, 12, 11, 13, 12.5, 11.1, 10.9, 12.2, 11.7, 10.4}
	y := []float64{14, 13.1, 15, 14.2, 13.8, 14.9, 13.3, 15.5, 14.4, 13.9}
	for i := 0; i < b.N; i++ {
		MannWhitney(x, y)
	}
}
