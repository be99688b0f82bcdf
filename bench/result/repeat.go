package result

import (
	"fmt"
	"math"
	"slices"

	"github.com/rdmabench/rdmabench/hist"
)

// Repeated runs (--repeat K): one test run K times on fresh QPs. The
// result's figures are the medians of the runs' figures; Runs keeps each
// run's, and Repeat says how far they spread.

// RunFigures are one run's figures of a repeated test.
type RunFigures struct {
	Iterations int64     `json:"iterations"`
	DurationNS int64     `json:"duration_ns"`
	Bandwidth  Bandwidth `json:"bandwidth"`
	Latency    Latency   `json:"latency_ns"`
}

// Spread is how one figure varied over the runs, in the figure's unit (ns
// for latencies, MB/s for bandwidth, Mpps for message rate).
type Spread struct {
	Figure string  `json:"figure"` // "p99", "p99.999", "mean", "bw_mb_per_s", "mpps"
	Runs   int     `json:"runs"`   // runs in which the figure was backed (not n/a)
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is the coefficient of variation: the runs' population standard
	// deviation over their mean (0.05 is 5 %).
	CV float64 `json:"cv"`
}

// Repeat summarises the runs of a repeated test.
type Repeat struct {
	Runs    int      `json:"runs"`
	Figures []Spread `json:"figures"`
}

// RunFigure returns figure (as named in Spread.Figure) of run f, and
// whether it is backed.
func (f RunFigures) RunFigure(figure string) (float64, bool) {
	switch figure {
	case "bw_mb_per_s":
		return f.Bandwidth.MBPerSec, f.Iterations > 0
	case "mpps":
		return f.Bandwidth.Mpps, f.Iterations > 0
	case "mean":
		return f.Latency.Mean, f.Latency.Count > 0
	case "max":
		return f.Latency.Max, f.Latency.Count > 0
	}
	for _, q := range f.Latency.Percentiles {
		if q.Label() == figure {
			return q.Value.NS, q.Value.OK
		}
	}
	return 0, false
}

// FigureNames are the figures RunFigure knows for results with the default
// percentiles: their labels (p50, ..., p99.99), mean, max, bw_mb_per_s and
// mpps (the last two bandwidth tests only).
func FigureNames() []string {
	var out []string
	for _, p := range DefaultPercentiles {
		out = append(out, PercentileLabel(p))
	}
	return append(out, "mean", "max", "bw_mb_per_s", "mpps")
}

// figures lists the figures of runs: the reported percentiles, mean, max,
// and for bandwidth tests bandwidth and message rate.
func figures(mode string, runs []RunFigures) []string {
	var out []string
	for _, q := range runs[0].Latency.Percentiles {
		out = append(out, q.Label())
	}
	out = append(out, "mean", "max")
	if mode == ModeBW {
		out = append(out, "bw_mb_per_s", "mpps")
	}
	return out
}

// CombineRuns makes one result of the K runs of a repeated test: the first
// run's parameters, each run's figures in Runs, the medians of the runs'
// percentiles and bandwidth in Latency and Bandwidth (each percentile's
// interval is the order-statistic interval of its median over the runs:
// n/a below 6 runs at 95 %), the true min and max over every run, the mean
// and stdev of every run's samples pooled (in Histogram), Iterations and
// DurationNS summed, RTT from the pooled samples, and the spread of each
// figure in Repeat. The other fields (CPU, counters, connection,
// intervals) are the first run's.
func CombineRuns(runs []Result) (Result, error) {
	if len(runs) == 0 {
		return Result{}, fmt.Errorf("no runs to combine")
	}
	out := runs[0]
	if len(runs) == 1 {
		return out, nil
	}
	st := out.stats.orDefault()
	pooled := hist.New()
	out.Runs = nil
	out.Iterations, out.DurationNS = 0, 0
	for i, r := range runs {
		out.Runs = append(out.Runs, RunFigures{Iterations: r.Iterations, DurationNS: r.DurationNS, Bandwidth: r.Bandwidth, Latency: r.Latency})
		out.Iterations += r.Iterations
		out.DurationNS += r.DurationNS
		if r.Histogram == "" {
			continue
		}
		h, err := r.DecodeHistogram()
		if err != nil {
			return Result{}, fmt.Errorf("run %d: %w", i+1, err)
		}
		pooled.Merge(h)
	}
	if pooled.Count() > 0 {
		enc, err := pooled.Encode()
		if err != nil {
			return Result{}, err
		}
		out.Histogram, out.Samples = enc, pooled.Count()
		if out.RTT != nil {
			rtt := NewLatencyAt(pooled, 1, st)
			out.RTT = &rtt
		}
	}
	rep := &Repeat{Runs: len(runs)}
	for _, f := range figures(out.Mode, out.Runs) {
		var vals []float64
		for _, r := range out.Runs {
			if v, ok := r.RunFigure(f); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		rep.Figures = append(rep.Figures, spreadOf(f, vals))
	}
	out.Repeat = rep
	// the medians
	med := func(f string) (float64, bool) {
		for _, s := range rep.Figures {
			if s.Figure == f {
				return s.Median, true
			}
		}
		return 0, false
	}
	l := &out.Latency
	l.Percentiles = slices.Clone(l.Percentiles) // run 1 keeps its own
	l.Count = pooled.Count()
	if l.Count > 0 { // the true extremes over every run; mean and stdev pooled
		l.Min, l.Max = runs[0].Latency.Min, runs[0].Latency.Max
		for _, r := range runs {
			l.Min, l.Max = math.Min(l.Min, r.Latency.Min), math.Max(l.Max, r.Latency.Max)
		}
		div := Divisor(out.HistogramDivisor)
		l.Mean, l.Stdev = finite(pooled.Mean())/div, finite(pooled.StdDev())/div
	}
	for i := range l.Percentiles {
		q := &l.Percentiles[i]
		v, ok := med(q.Label())
		q.Value, q.CILow, q.CIHigh = Nanos{NS: v, OK: ok}, Nanos{}, Nanos{}
		if !ok {
			continue
		}
		var vals []float64
		for _, r := range out.Runs {
			if x, ok := r.RunFigure(q.Label()); ok {
				vals = append(vals, x)
			}
		}
		slices.Sort(vals)
		if lo, hi, ok := hist.OrderStatCI(int64(len(vals)), 0.5, st.Confidence); ok {
			q.CILow, q.CIHigh = Nanos{NS: vals[lo-1], OK: true}, Nanos{NS: vals[hi-1], OK: true}
		}
		if f := l.Fixed(q.P); f != nil {
			*f = q.Value
		}
	}
	if v, ok := med("bw_mb_per_s"); ok {
		out.Bandwidth = bandwidthOfMB(v)
		if m, ok := med("mpps"); ok {
			out.Bandwidth.Mpps = m
		}
	}
	return out, nil
}

// spreadOf is the spread of figure over vals (at least one).
func spreadOf(figure string, vals []float64) Spread {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	var sum, sq float64
	for _, v := range s {
		sum += v
	}
	mean := sum / float64(n)
	for _, v := range s {
		sq += (v - mean) * (v - mean)
	}
	cv := 0.0
	if mean != 0 {
		cv = math.Sqrt(sq/float64(n)) / mean
	}
	return Spread{Figure: figure, Runs: n, Median: med, Min: s[0], Max: s[n-1], CV: cv}
}

// bandwidthOfMB is the bandwidth of mb 10^6 bytes/s in every unit (message
// rate left 0).
func bandwidthOfMB(mb float64) Bandwidth {
	return Bandwidth{MBPerSec: mb, MiBPerSec: mb * 1e6 / (1 << 20), GbitPerSec: mb * 8 / 1e3}
}

// RateLimit is the rate limit a test's client sending ran under
// (--limit-bw, --limit-msgrate), enforced in its C loop.
type RateLimit struct {
	MsgsPerSec float64 `json:"msgs_per_s"` // total over the QPs it applies to
	// AppliesTo is "measured" (a bandwidth test's measured QPs) or "load"
	// (the load QPs of a latency-under-load test).
	AppliesTo string `json:"applies_to"`
}
