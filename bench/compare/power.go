package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Power: the smallest change the gate on repeated runs could detect. A
// gate that tests significance passes quietly when the runs are too noisy
// or too few to show a change of the size of --max-regress; Detectable
// says so, per figure, with the runs (--repeat) or iterations (-n) that
// would make the gate see it.
//
// The estimate is a bootstrap of the observed runs (docs/statistics.md,
// "Can the gate see?"): each figure's runs become log residuals about
// their side's median, pooled over both sides, inflated by sqrt(k/(k-1))
// for the median each side lost; a simulated gate draws the baseline's
// and the new run's counts of residuals with replacement, the new side
// shifted by a change. A change is detectable when the gate's exact
// Mann-Whitney test (the one GateAlpha runs) finds it, in the bad
// direction, at alpha in a fraction power of the draws. With one seed and
// the same draws for every change, the result is deterministic and
// monotone in the change, so the smallest such change is read off the
// draws directly: in one draw the test rejects from the shift at which
// the critical number of the pairs' differences lies below it.

// DefaultPower is the probability of detection the gate states its
// detectable change at.
const DefaultPower = 0.80

// powerDraws is the number of simulated gates per estimate; powerSeed
// seeds them (mixed with the run counts), so an estimate never varies.
const (
	powerDraws = 2000
	powerSeed  = 0x9e3779b97f4a7c15
)

// MaxSuggestRepeat is the most runs per side Detectable suggests.
const MaxSuggestRepeat = 50

// Detectable is what the gate could see of one figure of a repeated test.
type Detectable struct {
	Test     result.Key
	Metric   string // canonical metric name
	BaseRuns int
	NewRuns  int
	// Change is the smallest change the gate detects with probability
	// Power at Alpha, as a fraction in the bad direction: 0.25 is latency
	// up 25 % or bandwidth down 25 %. +Inf: none (MinP >= Alpha).
	Change float64
	Limit  float64 // the --max-regress limit, a fraction
	Alpha  float64
	Power  float64
	// Repeat is the smallest --repeat K on both sides whose detectable
	// change is within Limit; 0 when none up to MaxSuggestRepeat is.
	Repeat int
	// Iters is the -n per run that would bring the detectable change
	// within Limit at the current run counts, estimated from how much of
	// the runs' spread is sampling noise (the runs' percentile confidence
	// intervals, or the mean's standard error); 0 when more iterations
	// cannot do it (the runs differ by more than sampling explains, or the
	// figure has no interval, as max and bandwidth). ItersNow is the
	// runs' median -n.
	Iters    int64
	ItersNow int64
}

// Underpowered reports whether the gate could miss a change of the limit's
// size: the detectable change exceeds the limit.
func (d Detectable) Underpowered() bool { return d.Change > d.Limit }

// signed is the detectable change with the sign of the bad direction.
func (d Detectable) signed() string {
	if math.IsInf(d.Change, 1) {
		return "none"
	}
	sign := "+"
	if metricByKey(d.Metric).rate {
		sign = "-"
	}
	return sign + strconv.FormatFloat(d.Change*100, 'f', 1, 64) + "%"
}

func (d Detectable) context() string {
	return fmt.Sprintf("alpha %g, power %g%%, %d vs %d runs", d.Alpha, d.Power*100, d.BaseRuns, d.NewRuns)
}

// String describes d on one line: "send lat 2B: p99 detectable change
// +8.1% (alpha 0.05, power 80%, 5 vs 5 runs)", or for an underpowered
// figure "UNDERPOWERED send lat 2B: p99: smallest detectable change +85.2%
// > limit 10% (8.5x; ...): --repeat 23 on both sides would resolve it, or
// -n 42000 per run (now 3000)".
func (d Detectable) String() string {
	m := metricByKey(d.Metric)
	if !d.Underpowered() {
		return fmt.Sprintf("%s: %s detectable change %s (%s)", d.Test, m.name, d.signed(), d.context())
	}
	limit := strconv.FormatFloat(d.Limit*100, 'g', 4, 64) + "%"
	var by string
	switch {
	case math.IsInf(d.Change, 1):
		by = fmt.Sprintf("no change is detectable: %d against %d runs cannot reach p < %g (limit %s)",
			d.BaseRuns, d.NewRuns, d.Alpha, limit)
	case d.Limit > 0:
		by = fmt.Sprintf("smallest detectable change %s > limit %s (%.1fx; %s)", d.signed(), limit, d.Change/d.Limit, d.context())
	default:
		by = fmt.Sprintf("smallest detectable change %s > limit %s (%s)", d.signed(), limit, d.context())
	}
	fix := fmt.Sprintf("not even --repeat %d on both sides would resolve it", MaxSuggestRepeat)
	if d.Repeat > 0 {
		fix = fmt.Sprintf("--repeat %d on both sides would resolve it", d.Repeat)
	}
	if d.Iters > 0 {
		fix += fmt.Sprintf(", or -n %d per run (now %d)", d.Iters, d.ItersNow)
	} else if d.Repeat > 0 && !math.IsInf(d.Change, 1) {
		fix += "; more iterations (-n) alone would not"
	}
	return fmt.Sprintf("UNDERPOWERED %s: %s: %s: %s", d.Test, m.name, by, fix)
}

// PowerError reports that the gate could not see: figures whose detectable
// change exceeds their limit, and tests compared on single runs, whose
// noise the gate cannot judge at all (compare --require-power).
type PowerError struct {
	Underpowered []Detectable
	SingleRun    []result.Key
	Unestimated  []string // checks whose detectable change could not be estimated
}

func (e *PowerError) Error() string {
	var parts []string
	for _, d := range e.Underpowered {
		if math.IsInf(d.Change, 1) {
			parts = append(parts, fmt.Sprintf("%s %s detects no change (%d vs %d runs)", d.Test, d.Metric, d.BaseRuns, d.NewRuns))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s detects %s > %s", d.Test, d.Metric, d.signed(),
			strconv.FormatFloat(d.Limit*100, 'g', 4, 64)+"%"))
	}
	for _, k := range e.SingleRun {
		parts = append(parts, fmt.Sprintf("%s single runs", k))
	}
	for _, c := range e.Unestimated {
		parts = append(parts, c+" not estimated")
	}
	return "the gate cannot see a change of the limits' size (--require-power):" + oneALine(parts)
}

// powerModel is the pooled, inflated log residuals of one figure's runs,
// signed so that larger is worse.
type powerModel struct {
	resid []float64
	sd    float64 // root mean square of resid: the runs' spread in log units
}

// newPowerModel pools the residuals of base and cur (each at least two
// positive values); ok is false otherwise.
func newPowerModel(base, cur []float64, rate bool) (powerModel, bool) {
	var pm powerModel
	for _, side := range [][]float64{base, cur} {
		if len(side) < 2 {
			return pm, false
		}
		t := make([]float64, len(side))
		for i, v := range side {
			if !(v > 0) || math.IsInf(v, 1) {
				return pm, false
			}
			t[i] = math.Log(v)
			if rate {
				t[i] = -t[i]
			}
		}
		med := median(slices.Clone(t))
		infl := math.Sqrt(float64(len(t)) / float64(len(t)-1))
		for _, x := range t {
			pm.resid = append(pm.resid, (x-med)*infl)
		}
	}
	var sq float64
	for _, r := range pm.resid {
		sq += r * r
	}
	pm.sd = math.Sqrt(sq / float64(len(pm.resid)))
	return pm, true
}

// shift is the smallest shift in log units that the gate's test of nb
// against nn runs detects in the bad direction at alpha with probability
// power, over the model's draws; +Inf when no shift can be significant.
func (pm powerModel) shift(nb, nn int, alpha, power float64) float64 {
	c := criticalU(nb, nn, alpha)
	if c < 0 {
		return math.Inf(1)
	}
	rng := rand.New(rand.NewPCG(powerSeed, uint64(nb)<<32|uint64(nn)))
	x, y := make([]float64, nb), make([]float64, nn)
	d := make([]float64, nb*nn)
	stars := make([]float64, powerDraws)
	for k := range stars {
		for i := range x {
			x[i] = pm.resid[rng.IntN(len(pm.resid))]
		}
		for j := range y {
			y[j] = pm.resid[rng.IntN(len(pm.resid))]
		}
		// the new side, shifted by s, beats x[i] in pair (i, j) when
		// y[j] + s > x[i]: U of the new side is the number of differences
		// x[i] - y[j] below s, and reaches c once s passes the c-th smallest
		for i := range x {
			for j := range y {
				d[i*nn+j] = x[i] - y[j]
			}
		}
		stars[k] = selectNth(d, c-1)
	}
	slices.Sort(stars)
	i := int(math.Ceil(power*float64(len(stars)))) - 1
	return math.Max(0, stars[max(0, min(i, len(stars)-1))])
}

// criticalU is the smallest U (of the new side, against nb baseline and nn
// new runs without ties) at which the two-sided p-value of MannWhitney is
// below alpha; -1 when no U is.
func criticalU(nb, nn int, alpha float64) int {
	total := nb * nn
	if nb <= exactLimit && nn <= exactLimit {
		counts := uCounts(nb, nn)
		var all float64
		for _, c := range counts {
			all += c
		}
		// upper[k]: arrangements with U >= k; the lower tail at k above
		// the middle is larger, so the p-value is 2 * upper / all
		upper := 0.0
		crit := -1
		for k := total; 2*k >= total; k-- {
			upper += counts[k]
			lower := all - upper + counts[k]
			if math.Min(1, 2*math.Min(lower, upper)/all) < alpha {
				crit = k
			} else {
				break
			}
		}
		return crit
	}
	fn, fm := float64(nb), float64(nn)
	mean := fn * fm / 2
	sd := math.Sqrt(fn * fm / 12 * (fn + fm + 1))
	z := math.Sqrt2 * math.Erfcinv(alpha)
	for k := int(math.Floor(mean + 0.5 + z*sd)); k <= total; k++ {
		if k > 0 && math.Erfc((float64(k)-mean-0.5)/sd/math.Sqrt2) < alpha {
			return k
		}
	}
	return -1
}

// selectNth returns the n-th smallest (0-based) of vals, reordering vals.
func selectNth(vals []float64, n int) float64 {
	lo, hi := 0, len(vals)-1
	for lo < hi {
		p := vals[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for vals[i] < p {
				i++
			}
			for vals[j] > p {
				j--
			}
			if i <= j {
				vals[i], vals[j] = vals[j], vals[i]
				i++
				j--
			}
		}
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return vals[n]
		}
	}
	return vals[n]
}

// fraction turns a shift in log units into a change in the bad direction.
func fraction(shift float64, rate bool) float64 {
	if math.IsInf(shift, 1) {
		return shift
	}
	if rate {
		return -math.Expm1(-shift)
	}
	return math.Expm1(shift)
}

// logShift is the inverse of fraction.
func logShift(change float64, rate bool) float64 {
	if rate {
		return -math.Log1p(-change)
	}
	return math.Log1p(change)
}

// MinDetectable is the smallest change, as a fraction in the bad direction
// (latency up, or bandwidth and message rate down when rate), that the
// gate on runs base against runs cur detects at alpha with probability
// power; +Inf when no change can be significant with so few runs, and NaN
// when a side has fewer than two positive values.
func MinDetectable(base, cur []float64, rate bool, alpha, power float64) float64 {
	pm, ok := newPowerModel(base, cur, rate)
	if !ok {
		return math.NaN()
	}
	return fraction(pm.shift(len(base), len(cur), alpha, power), rate)
}

// detectable is the Detectable of metric m of test k, whose runs are b and
// n with values bs and ns; ok is false when the runs cannot be modelled.
func detectable(k result.Key, m metricDef, b, n *result.Result, bs, ns []float64, limit, alpha, power float64) (Detectable, bool) {
	pm, ok := newPowerModel(bs, ns, m.rate)
	if !ok {
		return Detectable{}, false
	}
	d := Detectable{Test: k, Metric: m.key, BaseRuns: len(bs), NewRuns: len(ns), Limit: limit, Alpha: alpha, Power: power}
	s := pm.shift(len(bs), len(ns), alpha, power)
	d.Change = fraction(s, m.rate)
	var iters []float64
	for _, r := range [...]*result.Result{b, n} {
		for _, f := range r.Runs {
			iters = append(iters, float64(f.Iterations))
		}
	}
	d.ItersNow = int64(median(iters))
	if !d.Underpowered() {
		return d, true
	}
	want := logShift(limit, m.rate)
	// --repeat: the smallest K on both sides within the limit (the
	// detectable shift falls with K): doubling from the runs there are,
	// then a binary search, over the same draws
	lo, hi := max(len(bs), len(ns)), 0
	for k := lo; hi == 0 && k >= lo && k <= MaxSuggestRepeat; k = min(2*k, MaxSuggestRepeat) {
		if pm.shift(k, k, alpha, power) <= want {
			hi = k
		} else if k == MaxSuggestRepeat {
			break
		} else {
			lo = k
		}
	}
	if hi > 0 {
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if pm.shift(mid, mid, alpha, power) <= want {
				hi = mid
			} else {
				lo = mid
			}
		}
		d.Repeat = hi
	}
	// -n: the detectable shift scales with the residuals' spread; of its
	// variance, the within-run (sampling) part falls as 1/n, the part
	// between runs does not
	if w2, ok := withinVar(m, b, n); ok && !math.IsInf(s, 1) && s > 0 && d.ItersNow > 0 {
		total2 := pm.sd * pm.sd
		between2 := math.Max(0, total2-w2)
		a := want / s // the spread must shrink by this factor
		need := a*a*total2 - between2
		if w2 > 0 && need > 0 {
			f := w2 / need
			if it := roundUp(float64(d.ItersNow) * f); it > d.ItersNow && it <= 1e9 {
				d.Iters = it
			}
		}
	}
	return d, true
}

// withinVar is the mean over the runs of b and n of the sampling variance
// of m's log within one run: from a percentile's confidence interval, or
// the mean's standard error; ok is false when m has neither.
func withinVar(m metricDef, b, n *result.Result) (float64, bool) {
	var sum float64
	cnt := 0
	for _, r := range [...]*result.Result{b, n} {
		for _, f := range r.Runs {
			l := &f.Latency
			switch {
			case m.pct > 0:
				conf := l.Confidence
				if !(conf > 0 && conf < 1) {
					conf = 0.95
				}
				z := math.Sqrt2 * math.Erfinv(conf)
				for _, q := range l.Percentiles {
					if q.Label() == m.name && q.CILow.OK && q.CIHigh.OK && q.CILow.NS > 0 && q.CIHigh.NS >= q.CILow.NS {
						sd := (math.Log(q.CIHigh.NS) - math.Log(q.CILow.NS)) / (2 * z)
						sum += sd * sd
						cnt++
					}
				}
			case m.key == MetricMean && l.Count > 0 && l.Mean > 0:
				se := l.Stdev / math.Sqrt(float64(l.Count)) / l.Mean
				sum += se * se
				cnt++
			}
		}
	}
	if cnt == 0 {
		return 0, false
	}
	return sum / float64(cnt), true
}

// roundUp rounds v up to two significant digits: 41234 -> 42000.
func roundUp(v float64) int64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	if v > 1e12 {
		return math.MaxInt64
	}
	p := math.Pow(10, math.Max(0, math.Floor(math.Log10(v))-1))
	return int64(math.Ceil(v/p) * p)
}
