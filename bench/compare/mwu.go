package compare

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// The Mann-Whitney U test (Wilcoxon rank-sum): do two sets of repeated
// runs come from the same distribution? It assumes nothing about the shape
// of the runs' figures, which on a noisy fabric are rarely normal. The
// p-value is benchstat's: golang.org/x/perf/benchmath's AssumeNothing
// (go-moremath's U test underneath).

// exactLimit is the largest run count per side for which the p-value is
// exact without ties (benchmath: up to 50 a side; with ties, up to 25 a
// side, through the distribution of U given the ties); beyond, the normal
// approximation with tie and continuity corrections. criticalU (power.go)
// uses it for the exact distribution without ties, uCounts.
const exactLimit = 50

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test of
// x against y, and U of x (the number of pairs (xi, yj) with xi > yj, ties
// counting one half). ok is false when either side has no value; every
// value equal gives p 1.
//
// It replaced a test of our own that took the normal approximation
// whenever the runs had ties: benchmath's is exact with ties up to 25 runs
// a side, which is what the gate sees (--repeat 5, figures that repeat
// from the histograms' buckets), and is the better p-value there; without
// ties both were the same exact test (mwu_pinned.golden).
func MannWhitney(x, y []float64) (p, u float64, ok bool) {
	if len(x) == 0 || len(y) == 0 {
		return 1, 0, false
	}
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	// NewSample sorts the values it is given: copies, not the caller's
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(x), &benchmath.DefaultThresholds),
		benchmath.NewSample(slices.Clone(y), &benchmath.DefaultThresholds))
	return c.P, u, true
}

// uCounts is the distribution of U for sides of n and m values: the number
// of arrangements with each U from 0 to n*m, by the recurrence
// f(n, m, k) = f(n-1, m, k-m) + f(n, m-1, k).
func uCounts(n, m int) []float64 {
	// f[j][k] for the current i (values on the first side), j on the second
	f := make([][]float64, m+1)
	for j := range f {
		f[j] = make([]float64, n*m+1)
		f[j][0] = 1 // i = 0: U = 0, one arrangement
	}
	for i := 1; i <= n; i++ {
		g := make([][]float64, m+1)
		for j := 0; j <= m; j++ {
			g[j] = make([]float64, n*m+1)
			for k := 0; k <= i*j; k++ {
				// the largest value is on the first side: it beats all j
				if k >= j {
					g[j][k] += f[j][k-j]
				}
				if j > 0 {
					g[j][k] += g[j-1][k]
				}
			}
		}
		f = g
	}
	return f[m]
}

// MinP is the smallest two-sided p-value the test can give for sides of n
// and m runs: 2 / C(n+m, n). When it exceeds alpha, no change between
// such run sets can be significant.
func MinP(n, m int) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	lc, _ := math.Lgamma(float64(n + m + 1))
	la, _ := math.Lgamma(float64(n + 1))
	lb, _ := math.Lgamma(float64(m + 1))
	return math.Min(1, 2/math.Exp(lc-la-lb))
}
