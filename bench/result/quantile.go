package result

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/hist"
)

// Percentiles of a latency distribution with their confidence intervals.

// DefaultPercentiles are the percentiles reported when none are asked for.
var DefaultPercentiles = []float64{50, 90, 99, 99.9, 99.99}

// Stats says which percentiles a result reports and at what confidence.
// Its zero value means DefaultPercentiles at hist.DefaultConfidence.
type Stats struct {
	Percentiles []float64 // percents in (0, 100), ascending
	Confidence  float64   // in (0, 1)
}

// orDefault fills the zero fields of s.
func (s Stats) orDefault() Stats {
	if len(s.Percentiles) == 0 {
		s.Percentiles = DefaultPercentiles
	}
	if !(s.Confidence > 0 && s.Confidence < 1) {
		s.Confidence = hist.DefaultConfidence
	}
	return s
}

// Quantile is one reported percentile: its value and its confidence
// interval, all in ns (after the histogram divisor). Value, CILow and
// CIHigh are absent (JSON null, printed n/a) when the interval runs off
// the end of the data.
type Quantile struct {
	P      float64 `json:"p"` // percent, e.g. 99.9
	Value  Nanos   `json:"value"`
	CILow  Nanos   `json:"ci_low"`
	CIHigh Nanos   `json:"ci_high"`
}

// Label is the percentile's name: "p99.9".
func (q Quantile) Label() string { return PercentileLabel(q.P) }

// PercentileLabel names percentile p: "p50", "p99.9", "p99.999".
func PercentileLabel(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// quantiles reads st's percentiles and their intervals off h, divided by div.
func quantiles(h *hist.Histogram, div float64, st Stats) []Quantile {
	out := make([]Quantile, 0, len(st.Percentiles))
	for _, p := range st.Percentiles {
		q := Quantile{P: p}
		if v, ok := h.PercentileAt(p, st.Confidence); ok {
			lo, hi := h.PercentileCI(p, st.Confidence)
			q.Value = NanosOf(hist.Value{NS: v, OK: true}, div)
			q.CILow, q.CIHigh = NanosOf(lo, div), NanosOf(hi, div)
		}
		out = append(out, q)
	}
	return out
}

// Quantile returns l's entry for percentile p, if l reports it.
func (l Latency) Quantile(p float64) (Quantile, bool) {
	for _, q := range l.Percentiles {
		if q.P == p {
			return q, true
		}
	}
	return Quantile{}, false
}

// ParsePercentiles parses a comma-separated list of percents such as
// "50,90,99,99.9,99.99,99.999" into ascending order without repeats. Each
// must lie strictly between 0 and 100.
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimPrefix(strings.TrimSpace(f), "p")
		if f == "" {
			continue
		}
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || !(p > 0 && p < 100) {
			return nil, fmt.Errorf("percentile %q: want a percent strictly between 0 and 100, such as 99.9 (max is reported anyway)", f)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("percentiles %q: empty list", s)
	}
	if len(out) > 16 {
		return nil, fmt.Errorf("percentiles %q: %d of them, at most 16", s, len(out))
	}
	slices.Sort(out)
	return out, nil
}

// Fixed is l's fixed field of percentile p (P50, P90, P99, P99_9 or
// P99_99), or nil for any other percentile.
func (l *Latency) Fixed(p float64) *Nanos {
	switch p {
	case 50:
		return &l.P50
	case 90:
		return &l.P90
	case 99:
		return &l.P99
	case 99.9:
		return &l.P99_9
	case 99.99:
		return &l.P99_99
	}
	return nil
}
