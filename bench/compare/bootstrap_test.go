package compare

import "testing"

// TestMedianRatioInterval: identical tools give an interval around 1; a
// tool 10 % faster about 1.1; the interval holds the point ratio; nothing
// to resample is not ok.
func TestMedianRatioInterval(t *testing.T) {
	for _, c := range []struct {
		a, b   []float64
		lo, hi float64
	}{
		{[]float64{10, 11, 12, 13}, []float64{10, 11, 12, 13}, 0.8, 1.25},
		{[]float64{22, 22.1, 21.9, 22}, []float64{20, 20.1, 19.9}, 1.08, 1.12},
	} {
		lo, hi, ok := MedianRatioInterval([]RatioGroup{{c.a, c.b}}, 4000, 0.95)
		r := MedianOf(c.a) / MedianOf(c.b)
		if !ok || lo > hi || lo < c.lo || hi > c.hi || lo > r || hi < r {
			t.Errorf("a %v b %v: interval %.3f-%.3f (%v), want within %.2f-%.2f around %.3f", c.a, c.b, lo, hi, ok, c.lo, c.hi, r)
		}
	}
	if _, _, ok := MedianRatioInterval([]RatioGroup{{A: []float64{1}}}, 100, 0.95); ok {
		t.Error("no B runs: ok")
	}
	if m := MedianOf([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median %v, want 2.5", m)
	}
}
