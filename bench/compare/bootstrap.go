package compare

// A bootstrap interval for the ratio of two tools' medians (or another
// quantile) over repeated runs (make bench's comparison with perftest, internal/vsperftest, and scripts/wirebw's ratios).

import (
	"math/rand/v2"
	"slices"
)

// RatioGroup is one group of runs that a resample keeps together: A's and
// B's runs of one round (an alternating block), resampled within it.
type RatioGroup struct{ A, B []float64 }

// MedianOf is the median of vals (not modified); 0 for none.
func MedianOf(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	return median(slices.Clone(vals))
}

// MedianRatioInterval is the conf (0.95: 95 %) percentile bootstrap
// interval of median(A)/median(B) over all groups' runs: each of reps
// resamples draws, within every group, as many of its A runs and of its B
// runs as it has, with replacement, so drift between groups (which the
// alternating order cancels) does not widen it. The generator is seeded:
// the same runs give the same interval. ok is false when A or B has no
// run, or B's median is 0.
func MedianRatioInterval(groups []RatioGroup, reps int, conf float64) (lo, hi float64, ok bool) {
	return ratioInterval(groups, reps, conf, median)
}

// QuantileOf is the q quantile (0..1) of vals (not modified), linear
// between order statistics; 0 for none.
func QuantileOf(vals []float64, q float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	return sortedQuantile(s, q)
}

// QuantileRatioInterval is MedianRatioInterval for the q quantile (0..1)
// of A's and of B's runs: with q = 0.25 for a time (0.75 for a rate), the
// ratio of the two tools' better quartiles, which runs that a noisy host
// slowed do not reach while they are fewer than three in four.
func QuantileRatioInterval(groups []RatioGroup, q float64, reps int, conf float64) (lo, hi float64, ok bool) {
	return ratioInterval(groups, reps, conf, func(v []float64) float64 {
		slices.Sort(v)
		return sortedQuantile(v, q)
	})
}

// ratioInterval is the bootstrap of stat(A)/stat(B) (stat may reorder
// its argument).
func ratioInterval(groups []RatioGroup, reps int, conf float64, stat func([]float64) float64) (lo, hi float64, ok bool) {
	var na, nb int
	for _, g := range groups {
		na, nb = na+len(g.A), nb+len(g.B)
	}
	if na == 0 || nb == 0 || reps < 1 {
		return 0, 0, false
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ratios := make([]float64, 0, reps)
	a, b := make([]float64, 0, na), make([]float64, 0, nb)
	for range reps {
		a, b = a[:0], b[:0]
		for _, g := range groups {
			for range g.A {
				a = append(a, g.A[rng.IntN(len(g.A))])
			}
			for range g.B {
				b = append(b, g.B[rng.IntN(len(g.B))])
			}
		}
		if sb := stat(b); sb != 0 { // stat reorders a and b: they are refilled
			ratios = append(ratios, stat(a)/sb)
		}
	}
	if len(ratios) == 0 {
		return 0, 0, false
	}
	slices.Sort(ratios)
	tail := (1 - conf) / 2
	return sortedQuantile(ratios, tail), sortedQuantile(ratios, 1-tail), true
}

// sortedQuantile is the q quantile of sorted s, linear between order
// statistics.
func sortedQuantile(s []float64, q float64) float64 {
	x := q * float64(len(s)-1)
	i := int(x)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}
