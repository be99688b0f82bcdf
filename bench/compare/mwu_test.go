package compare

import (
	"math"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		p, u float64 // p within 1e-4
	}{
		// fully separated 5 vs 5: the smallest p, 2/252
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252, 0},
		{"separated reversed", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252, 25},
		// interleaved: no evidence; 2*P(U <= 10) = 2*87/252 (R's wilcox.test: 0.6905)
		{"interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 174.0 / 252, 10},
		// 3 vs 3 separated: 2/20, never below 0.05
		{"three each", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1, 0},
		// with ties: normal approximation; mean 18, tie sum 48, variance
		// 36/12*(13-48/132) = 37.909, z = (18-0.5)/6.157 = 2.842
		{"ties", []float64{1, 2, 2, 3, 3, 3}, []float64{4, 4, 5, 5, 6, 6}, 0.00448, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, u, ok := MannWhitney(tc.x, tc.y)
			if !ok {
				t.Fatal("not ok")
			}
			if math.Abs(p-tc.p) > 1e-4 || u != tc.u {
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
