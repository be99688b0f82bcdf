package compare

import (
	"math"
	"sort"
)

// The Mann-Whitney U test (Wilcoxon rank-sum): do two sets of repeated
// runs come from the same distribution? It assumes nothing about the shape
// of the runs' figures, which on a noisy fabric are rarely normal. benchstat
// uses the same test for Go benchmarks.

// exactLimit is the largest run count per side for which the p-value is
// computed exactly (no ties); beyond it, or with ties, the normal
// approximation with tie and continuity corrections is used.
const exactLimit = 50

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test of
// x against y, and U of x (the number of pairs (xi, yj) with xi > yj, ties
// counting one half). ok is false when either side has no value.
func MannWhitney(x, y []float64) (p, u float64, ok bool) {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 1, 0, false
	}
	type obs struct {
		v    float64
		left bool
	}
	all := make([]obs, 0, n+m)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// mid-ranks, and the tie correction sum of t^3 - t
	var rx, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].left {
				rx += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	fn, fm := float64(n), float64(m)
	u = rx - fn*(fn+1)/2
	if ties == 0 && n <= exactLimit && m <= exactLimit {
		return exactP(n, m, u), u, true
	}
	mean := fn * fm / 2
	N := fn + fm
	sd := math.Sqrt(fn * fm / 12 * ((N + 1) - ties/(N*(N-1))))
	if sd == 0 {
		return 1, u, true // every value equal
	}
	z := (math.Abs(u-mean) - 0.5) / sd // continuity correction
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2)), u, true
}

// exactP is the exact two-sided p-value of U = u for sides of n and m
// values without ties: twice the smaller tail of U's distribution, counted
// over all C(n+m, n) arrangements.
func exactP(n, m int, u float64) float64 {
	counts := uCounts(n, m) // counts[k]: arrangements with U = k
	var total, lower, upper float64
	for k, c := range counts {
		total += c
		if float64(k) <= u {
			lower += c
		}
		if float64(k) >= u {
			upper += c
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
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
