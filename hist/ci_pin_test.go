package hist

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rdmabench/rdmabench/internal/golden"
)

// TestCIPinned pins the binomial CDF and the intervals' ranks of the
// percentiles rdmabench reports, at the sample counts runs have
// (testdata/ci_pinned.golden, made before binomCDF moved to gonum's
// distuv): the CDF to 12 significant digits, the ranks exactly.
func TestCIPinned(t *testing.T) {
	var b strings.Builder
	counts := []int64{5, 6, 10, 35, 36, 100, 367, 368, 1000, 2000, 3687, 3688, 5000, 10000, 36886, 36887, 100000, 1000000, 10000000, 1000000000}
	for _, conf := range []float64{0.95, 0.99} {
		for _, p := range []float64{50, 90, 99, 99.9, 99.99, 99.999} {
			for _, n := range counts {
				lo, hi, ok := OrderStatCI(n, p/100, conf)
				fmt.Fprintf(&b, "conf %g p%g n %d: ranks %d..%d ok %v", conf, p, n, lo, hi, ok)
				if ok {
					fmt.Fprintf(&b, " coverage %.12g", Coverage(n, lo, hi, p/100))
				}
				b.WriteString("\n")
			}
		}
	}
	for _, c := range []struct {
		n int64
		p float64
	}{{10, 0.5}, {50, 0.9}, {368, 0.99}, {5000, 0.999}, {36887, 0.9999}, {1000000, 0.999}} {
		for _, k := range []int64{-1, 0, 1, c.n / 2, int64(float64(c.n) * c.p), c.n - 2, c.n - 1, c.n} {
			fmt.Fprintf(&b, "binomCDF(%d; n=%d, p=%g) = %.12g\n", k, c.n, c.p, binomCDF(k, c.n, c.p))
		}
	}
	golden.Check(t, "ci_pinned.golden", []byte(b.String()))
}

// BenchmarkOrderStatCI is the ranks of one interval, as every reported
// percentile of every result takes them: p99.9 of 10^6 samples.
func BenchmarkOrderStatCI(b *testing.B) {
	for b.Loop() {
		OrderStatCI(1_000_000, 0.999, 0.95)
	}
}

// BenchmarkBinomCDF is one CDF evaluation in the middle of the bisection.
func BenchmarkBinomCDF(b *testing.B) {
	for b.Loop() {
		binomCDF(998_950, 1_000_000, 0.999)
	}
}

// TestBinomCDFGonum: gonum's distuv.Binomial agrees with binomCDF to 1e-8
// where both hold (up to 10^8 samples), and gives the same ranks; binomCDF
// stays ours for 10^9 samples and more, where gonum's median CDF fails
// (see binomCDF).
func TestBinomCDFGonum(t *testing.T) {
	for _, n := range []int64{10, 368, 5000, 36887, 1_000_000, 100_000_000} {
		for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 0.9999} {
			lo, hi, ok := OrderStatCI(n, q, 0.95)
			if !ok {
				continue
			}
			g := distuv.Binomial{N: float64(n), P: q}
			for _, k := range []int64{lo - 2, lo - 1, lo, hi - 2, hi - 1, hi} {
				if got, want := g.CDF(float64(k)), binomCDF(k, n, q); math.Abs(got-want) > 1e-8 {
					t.Errorf("n=%d q=%g k=%d: gonum %.15g, ours %.15g", n, q, k, got, want)
				}
			}
		}
	}
	g := distuv.Binomial{N: 1e9, P: 0.5}
	t.Logf("n=1e9 p50: P(B <= 499969009) gonum %.6g, ours %.6g (mean - 1.96 sd: about 0.025)",
		g.CDF(499969009), binomCDF(499969009, 1e9, 0.5))
}
