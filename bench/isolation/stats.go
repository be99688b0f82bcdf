package isolation

import (
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/result"
)

// The ratios attacked/alone. Each figure's ratio is median(attacked)/
// median(alone) over the runs where the figure is backed (a percentile
// too few samples back is n/a in that run and left out). Its interval is
// the percentile bootstrap of that ratio over the runs (compare.
// MedianRatioInterval) when the sides have 3 backed runs or more together
// (a side with one resamples it alone, so the interval then holds the
// other side's spread only); with one run each, a percentile's interval is the ratio of the two distribution-free
// percentile intervals (attacked low / alone high .. attacked high / alone
// low), which covers the sampling noise inside the runs but not the noise
// between runs; the bandwidth of one run each has no interval.

// bootstrapReps is the resamples of each bootstrap interval.
const bootstrapReps = 2000

// runOf is the document's record of one victim run.
func runOf(round int, r result.Result) result.IsolationRun {
	l := r.Latency
	return result.IsolationRun{Round: round, Iterations: r.Iterations, P50: l.P50, P90: l.P90, P99: l.P99, P99_9: l.P99_9,
		P99_99: l.P99_99, Max: l.Max, Mpps: r.Bandwidth.Mpps, MBPerSec: r.Bandwidth.MBPerSec, Quantiles: l.Percentiles}
}

// rateOf is what the attacker achieved in one run (r.Load).
func rateOf(r result.Result) result.AttackerRate {
	if r.Load == nil {
		return result.AttackerRate{}
	}
	return result.AttackerRate{Mpps: r.Load.Bandwidth.Mpps, MBPerSec: r.Load.Bandwidth.MBPerSec, RegistrationsPerSec: r.Load.RegistrationsPerSec}
}

// medianRate is the median of each field of rates.
func medianRate(rates []result.AttackerRate) result.AttackerRate {
	var m, b, g []float64
	for _, r := range rates {
		m, b, g = append(m, r.Mpps), append(b, r.MBPerSec), append(g, r.RegistrationsPerSec)
	}
	return result.AttackerRate{Mpps: compare.MedianOf(m), MBPerSec: compare.MedianOf(b), RegistrationsPerSec: compare.MedianOf(g)}
}

// percentOf is the percent of a percentile figure ("p99.9": 99.9).
func percentOf(figure string) (float64, bool) {
	p, err := strconv.ParseFloat(strings.TrimPrefix(figure, "p"), 64)
	return p, err == nil && strings.HasPrefix(figure, "p")
}

// valueOf is figure's value in run (ns, or Mpps for bandwidth), and
// whether it is backed.
func valueOf(run result.IsolationRun, figure string) (float64, bool) {
	if figure == result.FigureBandwidth {
		return run.Mpps, run.Mpps > 0
	}
	var n result.Nanos
	switch figure {
	case "p50":
		n = run.P50
	case "p90":
		n = run.P90
	case "p99":
		n = run.P99
	case "p99.9":
		n = run.P99_9
	case "p99.99":
		n = run.P99_99
	}
	return n.NS, n.OK && n.NS > 0
}

// quantileOf is run's interval of percentile figure, when backed.
func quantileOf(run result.IsolationRun, figure string) (lo, hi float64, ok bool) {
	p, isP := percentOf(figure)
	if !isP {
		return 0, 0, false
	}
	for _, q := range run.Quantiles {
		if q.P == p && q.CILow.OK && q.CIHigh.OK && q.CILow.NS > 0 {
			return q.CILow.NS, q.CIHigh.NS, true
		}
	}
	return 0, 0, false
}

// Ratios are the ratios attacked/alone of every figure, at conf.
func Ratios(alone, attacked []result.IsolationRun, conf float64) []result.InflationRatio {
	out := make([]result.InflationRatio, 0, len(result.IsolationFigures))
	for _, f := range result.IsolationFigures {
		out = append(out, ratio(alone, attacked, f, conf))
	}
	return out
}

func ratio(alone, attacked []result.IsolationRun, figure string, conf float64) result.InflationRatio {
	r := result.InflationRatio{Figure: figure}
	var a, b []float64 // attacked, alone
	var ar, br []result.IsolationRun
	for _, run := range attacked {
		if v, ok := valueOf(run, figure); ok {
			a, ar = append(a, v), append(ar, run)
		}
	}
	for _, run := range alone {
		if v, ok := valueOf(run, figure); ok {
			b, br = append(b, v), append(br, run)
		}
	}
	r.AttackedRuns, r.AloneRuns = len(a), len(b)
	if len(a) == 0 || len(b) == 0 {
		return r
	}
	ma, mb := compare.MedianOf(a), compare.MedianOf(b)
	r.Attacked, r.Alone, r.Ratio = ptr(ma), ptr(mb), ptr(ma/mb)
	switch {
	case len(a)+len(b) >= 3: // a side with one backed run (the other's n/a in some) resamples as one
		if lo, hi, ok := compare.MedianRatioInterval([]compare.RatioGroup{{A: a, B: b}}, bootstrapReps, conf); ok {
			r.Low, r.High, r.Method = ptr(lo), ptr(hi), result.IntervalRuns
		}
	case len(a) == 1 && len(b) == 1:
		alo, ahi, ok1 := quantileOf(ar[0], figure)
		blo, bhi, ok2 := quantileOf(br[0], figure)
		if ok1 && ok2 {
			r.Low, r.High, r.Method = ptr(alo/bhi), ptr(ahi/blo), result.IntervalOrderStat
		}
	}
	return r
}

func ptr(v float64) *float64 { return &v }
