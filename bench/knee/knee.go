// Package knee finds knees in a figure measured along one axis: the places
// where a curve such as message rate against QPs falls off. Each point of
// the curve holds the figure of several repeated runs; a knee is a step
// between two neighbouring points where the median worsens by at least
// Options.MinDrop and the bootstrap interval of that worsening (resampling
// each point's runs) lies above zero. Pure Go: no cgo, no I/O.
package knee

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of Options.
const (
	DefaultMinDrop    = 0.2  // a worsening of 20 %
	DefaultConfidence = 0.95 // the drop's interval
	DefaultResamples  = 2000 // bootstrap resamples per step
)

// Point is one point of the curve: the axis value X and the figure of each
// repeated run there (any unit; all points in the same one).
type Point struct {
	X    float64
	Runs []float64
}

// Options tune Find. The zero value takes the defaults and treats the
// figure as a rate (higher is better).
type Options struct {
	// LowerIsBetter marks a figure where a rise is the worsening (a
	// latency); otherwise a fall is (a rate, a bandwidth).
	LowerIsBetter bool
	// MinDrop is the smallest relative worsening that is a knee: 0.2 is a
	// fall of 20 % (rates) or a rise of 20 % (latencies). 0: DefaultMinDrop.
	MinDrop float64
	// Confidence of the drop's interval, in (0, 1). 0: DefaultConfidence.
	Confidence float64
	// Resamples is the number of bootstrap resamples. 0: DefaultResamples.
	Resamples int
	// Seed seeds the resampling, so that one input gives one answer.
	Seed uint64
}

// WithDefaults is o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.MinDrop == 0 {
		o.MinDrop = DefaultMinDrop
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	return o
}

// Knee is a step of the curve between Points[Index-1] and Points[Index].
type Knee struct {
	Index         int
	Before, After float64 // the axis values either side
	// FigureBefore and FigureAfter are the medians of the runs either side.
	FigureBefore, FigureAfter float64
	// Drop is the relative worsening of the median: 1 − after/before for a
	// rate (0.47: −47 %), after/before − 1 for a latency (0.47: +47 %).
	Drop float64
	// DropLow and DropHigh bound Drop at Options.Confidence (bootstrap
	// percentile interval over both points' runs); CIOK is false when a
	// side has fewer than 2 runs and the interval is not known.
	DropLow, DropHigh float64
	CIOK              bool
}

// Step is what Find computed for one pair of neighbouring points, knee or
// not (Steps returns them all).
type Step = Knee

// Find returns the knees of points (in the order of X, which must rise),
// or none. It fails on bad input: fewer than 2 points, a point without
// runs, a non-finite or non-positive figure, X not rising, or options out
// of range.
func Find(points []Point, o Options) ([]Knee, error) {
	steps, err := Steps(points, o)
	if err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	var out []Knee
	for _, s := range steps {
		if IsKnee(s, o.MinDrop) {
			out = append(out, s)
		}
	}
	return out, nil
}

// IsKnee reports whether step s is a knee at minDrop: its drop reaches
// minDrop and, where its interval is known, the interval lies above zero.
func IsKnee(s Step, minDrop float64) bool {
	return s.Drop >= minDrop && (!s.CIOK || s.DropLow > minDrop/2)
}

// Steps computes the drop and its interval for every pair of neighbouring
// points (len(points)−1 steps), as Find does.
func Steps(points []Point, o Options) ([]Step, error) {
	o = o.WithDefaults()
	switch {
	case len(points) < 2:
		return nil, fmt.Errorf("knee: %d points; need at least 2", len(points))
	case !(o.MinDrop > 0 && o.MinDrop < 1):
		return nil, fmt.Errorf("knee: minimum drop %g out of range (0, 1)", o.MinDrop)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return nil, fmt.Errorf("knee: confidence %g out of range (0, 1)", o.Confidence)
	case o.Resamples < 100 || o.Resamples > 1000000:
		return nil, fmt.Errorf("knee: %d resamples out of range 100..1000000", o.Resamples)
	}
	for i, p := range points {
		if len(p.Runs) == 0 {
			return nil, fmt.Errorf("knee: point %d (x=%g) has no runs", i, p.X)
		}
		for _, v := range p.Runs {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("knee: point %d (x=%g) has figure %g; want a positive, finite value", i, p.X, v)
			}
		}
		if i > 0 && !(p.X > points[i-1].X) {
			return nil, fmt.Errorf("knee: x %g after %g; the axis must rise", p.X, points[i-1].X)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6b6e6565))
	out := make([]Step, 0, len(points)-1)
	for i := 1; i < len(points); i++ {
		a, b := points[i-1], points[i]
		s := Step{Index: i, Before: a.X, After: b.X, FigureBefore: Median(a.Runs), FigureAfter: Median(b.Runs)}
		s.Drop = drop(s.FigureBefore, s.FigureAfter, o.LowerIsBetter)
		if len(a.Runs) >= 2 && len(b.Runs) >= 2 {
			ds := make([]float64, o.Resamples)
			ra, rb := make([]float64, len(a.Runs)), make([]float64, len(b.Runs))
			for k := range ds {
				resample(rng, a.Runs, ra)
				resample(rng, b.Runs, rb)
				ds[k] = drop(Median(ra), Median(rb), o.LowerIsBetter)
			}
			slices.Sort(ds)
			alpha := (1 - o.Confidence) / 2
			s.DropLow, s.DropHigh, s.CIOK = quantile(ds, alpha), quantile(ds, 1-alpha), true
		}
		out = append(out, s)
	}
	return out, nil
}

// drop is the relative worsening from before to after.
func drop(before, after float64, lowerIsBetter bool) float64 {
	if lowerIsBetter {
		return after/before - 1
	}
	return 1 - after/before
}

// resample fills dst with len(dst) draws, with replacement, from src.
func resample(rng *rand.Rand, src, dst []float64) {
	for i := range dst {
		dst[i] = src[rng.IntN(len(src))]
	}
}

// Median is the median of vs (the mean of the middle two for an even
// count); vs is not changed. NaN for none.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// quantile is the q-quantile of sorted s, linearly interpolated.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(lo)
	return s[lo]*(1-f) + s[lo+1]*f
}
