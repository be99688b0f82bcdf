package compare

import (
	"math"
	"testing"
)

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

// TestQuantileRatioInterval: runs with a slow state in some of them (a
// noisy host) move the medians' ratio, not the better quartiles': B is
// in its slow state in 5 runs of 12, A in 2 of 12, both about 20 when fast.
func TestQuantileRatioInterval(t *testing.T) {
	a := []float64{20, 20.1, 40, 19.9, 20, 20.2, 19.8, 41, 20, 20.1, 19.9, 20}
	b := []float64{20, 41, 19.9, 40, 20.1, 42, 20, 39, 19.8, 40, 20.2, 20}
	if q := QuantileOf(a, 0.25); math.Abs(q-19.975) > 1e-9 { // 19.9 + 0.75 × (20 - 19.9): the 2.75th of 0..11
		t.Errorf("QuantileOf(a, 0.25) = %v, want 19.975", q)
	}
	if q := QuantileOf([]float64{4, 1, 3, 2}, 0.5); q != 2.5 {
		t.Errorf("QuantileOf 0.5 = %v, want the median 2.5", q)
	}
	lo, hi, ok := QuantileRatioInterval([]RatioGroup{{a, b}}, 0.25, 4000, 0.95)
	if !ok || lo > 1 || hi < 1 || lo < 0.95 || hi > 1.05 {
		t.Errorf("better quartiles' ratio interval %.3f-%.3f (%v), want one holding 1 within 0.95-1.05", lo, hi, ok)
	}
	mlo, mhi, _ := QuantileRatioInterval([]RatioGroup{{a, b}}, 0.5, 4000, 0.95)
	if l, h, _ := MedianRatioInterval([]RatioGroup{{a, b}}, 4000, 0.95); l != mlo || h != mhi {
		t.Errorf("q 0.5 gives %.3f-%.3f, the median's interval is %.3f-%.3f", mlo, mhi, l, h)
	}
	if _, _, ok := QuantileRatioInterval([]RatioGroup{{A: a}}, 0.25, 100, 0.95); ok {
		t.Error("no B runs: ok")
	}
}
