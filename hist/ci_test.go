package hist

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
)

// exactCDF is P(B <= k), B ~ Binomial(n, p), summed exactly in big.Float:
// the reference for binomCDF.
func exactCDF(k, n int64, p float64) float64 {
	const prec = 256
	bp := new(big.Float).SetPrec(prec).SetFloat64(p)
	bq := new(big.Float).SetPrec(prec).Sub(big.NewFloat(1).SetPrec(prec), bp)
	sum := new(big.Float).SetPrec(prec)
	for i := int64(0); i <= k; i++ {
		c := new(big.Float).SetPrec(prec).SetInt(new(big.Int).Binomial(n, i))
		for j := int64(0); j < i; j++ {
			c.Mul(c, bp)
		}
		for j := int64(0); j < n-i; j++ {
			c.Mul(c, bq)
		}
		sum.Add(sum, c)
	}
	f, _ := sum.Float64()
	return f
}

func TestBinomCDFExact(t *testing.T) {
	for _, tc := range []struct {
		n int64
		p float64
	}{{10, 0.5}, {50, 0.9}, {200, 0.99}, {300, 0.99}, {120, 0.25}} {
		for k := int64(0); k < tc.n; k += max(1, tc.n/17) {
			got, want := binomCDF(k, tc.n, tc.p), exactCDF(k, tc.n, tc.p)
			if math.Abs(got-want) > 1e-10 {
				t.Errorf("binomCDF(%d; n=%d, p=%g) = %.15g, exact %.15g", k, tc.n, tc.p, got, want)
			}
		}
	}
}

// TestOrderStatCIExact checks the ranks against the exact binomial sums:
// coverage at least conf, each tail at most (1-conf)/2, and no tighter
// equal-tailed ranks exist.
func TestOrderStatCIExact(t *testing.T) {
	for _, tc := range []struct {
		n      int64
		q      float64
		ok     bool
		lo, hi int64 // when known by hand; 0: checked by the tails only
	}{
		{n: 10, q: 0.5, ok: true, lo: 2, hi: 9}, // the textbook median interval for n=10: X(2)..X(9), 97.9 %
		{n: 5, q: 0.5, ok: false},               // 2 * 0.5^5 = 6.25 % > 5 %
		{n: 6, q: 0.5, ok: true, lo: 1, hi: 6},
		{n: 367, q: 0.99, ok: false}, // p99 at 95 % needs 368 samples
		{n: 368, q: 0.99, ok: true},
		{n: 35, q: 0.9, ok: false},
		{n: 36, q: 0.9, ok: true},
		{n: 1000, q: 0.99, ok: true},
		{n: 250, q: 0.9, ok: true},
	} {
		lo, hi, ok := OrderStatCI(tc.n, tc.q, 0.95)
		if ok != tc.ok {
			t.Errorf("n=%d q=%g: ok %v, want %v", tc.n, tc.q, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if tc.lo != 0 && (lo != tc.lo || hi != tc.hi) {
			t.Errorf("n=%d q=%g: ranks %d..%d, want %d..%d", tc.n, tc.q, lo, hi, tc.lo, tc.hi)
		}
		low := exactCDF(lo-1, tc.n, tc.q)
		high := 1 - exactCDF(hi-1, tc.n, tc.q)
		if low > 0.025+1e-12 || high > 0.025+1e-12 {
			t.Errorf("n=%d q=%g: ranks %d..%d leave tails %.4f and %.4f, want <= 0.025", tc.n, tc.q, lo, hi, low, high)
		}
		if cov := 1 - low - high; cov < 0.95 {
			t.Errorf("n=%d q=%g: coverage %.4f < 0.95", tc.n, tc.q, cov)
		}
		// tightest: one rank further in breaks a tail
		if lo < tc.n && exactCDF(lo, tc.n, tc.q) <= 0.025 {
			t.Errorf("n=%d q=%g: lo %d could be %d", tc.n, tc.q, lo, lo+1)
		}
		if hi > 1 && 1-exactCDF(hi-2, tc.n, tc.q) <= 0.025 {
			t.Errorf("n=%d q=%g: hi %d could be %d", tc.n, tc.q, hi, hi-1)
		}
	}
}

// TestOrderStatCILarge runs where exact sums are too slow: the ranks
// straddle q*n and the interval narrows like sqrt(n).
func TestOrderStatCILarge(t *testing.T) {
	prev := math.Inf(1)
	for _, n := range []int64{1e4, 1e5, 1e6, 1e7, 1e9} {
		lo, hi, ok := OrderStatCI(n, 0.999, 0.95)
		if !ok {
			t.Fatalf("n=%d: no interval", n)
		}
		c := 0.999 * float64(n)
		if float64(lo) > c || float64(hi) < c {
			t.Errorf("n=%d: ranks %d..%d do not straddle %.0f", n, lo, hi, c)
		}
		sd := math.Sqrt(float64(n) * 0.999 * 0.001)
		width := float64(hi-lo) / sd // about 2*1.96 for large n
		if width < 3.5 || width > 4.5 {
			t.Errorf("n=%d: width %.2f standard deviations, want about 3.92", n, width)
		}
		rel := float64(hi-lo) / float64(n)
		if rel >= prev {
			t.Errorf("n=%d: relative width %g did not shrink", n, rel)
		}
		prev = rel
	}
}

// TestPercentileCICoverage: for samples from a known distribution, the
// true percentile lies inside the 95 % interval in about 95 % of 1000
// trials. The intervals are conservative (discrete ranks), so the rate is
// at least 95 % up to sampling error: 1000 trials give a standard error of
// 0.7 %, and we allow 3 of them below.
func TestPercentileCICoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]uint64, 5000)
	const trials = 1000
	for _, tc := range []struct {
		p float64
		n int
	}{{50, 100}, {99, 1000}, {99.9, 5000}} {
		p, n := tc.p, tc.n
		// exponential with mean 10 µs: x_q = -mean*ln(1-q)
		const mean = 10000.0
		truth := -mean * math.Log(1-p/100)
		hits := 0
		for i := 0; i < trials; i++ {
			h := New()
			for j := 0; j < n; j++ {
				buf[j] = uint64(r.ExpFloat64() * mean)
			}
			h.RecordSlice(buf[:n], 0)
			lo, hi := h.PercentileCI(p, 0.95)
			if !lo.OK {
				t.Fatalf("p%g with %d samples: no interval", p, n)
			}
			// the histogram's resolution (0.1 %) widens the ends slightly
			if float64(lo.NS) <= truth*1.001 && truth <= float64(hi.NS)*1.001 {
				hits++
			}
		}
		rate := float64(hits) / trials
		t.Logf("p%g: true value inside the 95 %% interval in %d of %d trials", p, hits, trials)
		if rate < 0.95-3*0.007 || rate > 0.995 {
			t.Errorf("p%g: coverage %.3f, want about 0.95 (conservative)", p, rate)
		}
	}
}

func TestValueAtRank(t *testing.T) {
	h := New()
	vals := []int64{5, 1, 9, 3, 7, 2000, 11}
	for _, v := range vals {
		h.Record(v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for i, v := range vals {
		if got := h.ValueAtRank(int64(i + 1)); got != v {
			t.Errorf("rank %d: %d, want %d", i+1, got, v)
		}
	}
}

func BenchmarkPercentileCI(b *testing.B) {
	h := New()
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1e6; i++ {
		h.Record(int64(r.ExpFloat64() * 1e4))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.PercentileCI(99.9, 0.95)
	}
}
