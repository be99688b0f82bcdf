package result

// Latency distributions: Nanos, Latency and their JSON form.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/rdmabench/rdmabench/hist"
)

// Nanos is a latency in ns, possibly fractional, that may be absent (n/a)
// because too few samples back it (see hist.Histogram.Percentile). It
// marshals to a JSON number, or null when absent. Its zero value is absent.
type Nanos struct {
	NS float64 // nanoseconds; meaningful only when OK
	OK bool    // whether enough samples back the value
}

// NanosOf converts v to Nanos divided by div (div <= 0 counts as 1).
func NanosOf(v hist.Value, div float64) Nanos {
	if !v.OK {
		return Nanos{}
	}
	return Nanos{NS: float64(v.NS) / Divisor(div), OK: true}
}

// MarshalJSON encodes n as a number of ns, or null when !n.OK.
func (n Nanos) MarshalJSON() ([]byte, error) {
	if !n.OK {
		return []byte("null"), nil
	}
	return appendNumber(nil, n.NS), nil
}

// UnmarshalJSON decodes a number of ns, or null as an absent value.
func (n *Nanos) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Nanos{}
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("latency %q is not a number of ns or null", b)
	}
	*n = Nanos{NS: f, OK: true}
	return nil
}

// US formats n as µs with 2 decimals (perftest's resolution), or "n/a".
func (n Nanos) US() string {
	if !n.OK {
		return "n/a"
	}
	return strconv.FormatFloat(n.NS/1000, 'f', 2, 64)
}

// String returns n in ns, such as "750.5ns", or "n/a".
func (n Nanos) String() string {
	if !n.OK {
		return "n/a"
	}
	return string(appendNumber(nil, n.NS)) + "ns"
}

func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// Latency summarises a latency distribution in ns. Min and Max are exact;
// Mean and Stdev carry the histogram's 0.1 % resolution. A percentile that
// too few samples back is absent (JSON null, printed n/a): one whose
// confidence interval runs off the end of the data (at 95 %: p50 needs 6
// samples, p90 36, p99 368, p99.9 3,688, p99.99 36,887).
type Latency struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Stdev  float64 `json:"stdev"` // population standard deviation
	P50    Nanos   `json:"p50"`
	P90    Nanos   `json:"p90"`
	P99    Nanos   `json:"p99"`
	P99_9  Nanos   `json:"p99_9"`
	P99_99 Nanos   `json:"p99_99"`
	Max    float64 `json:"max"` // the true maximum, nothing discarded
	// Confidence is the level of the intervals in Percentiles (0.95).
	Confidence float64 `json:"confidence,omitempty"`
	// Percentiles are the reported percentiles (--percentiles) with their
	// distribution-free confidence intervals (hist.OrderStatCI).
	Percentiles []Quantile `json:"percentiles,omitempty"`
}

// NewLatency summarises h with every value divided by div: div 2 reports
// RTT/2 from recorded round trips (the percentiles of RTT/2 are those of RTT
// halved). Fractional ns are kept. div <= 0 counts as 1.
func NewLatency(h *hist.Histogram, div float64) Latency {
	return NewLatencyAt(h, div, Stats{})
}

// NewLatencyAt is NewLatency reporting st's percentiles with their
// confidence intervals (Latency.Percentiles) and applying the n/a rule at
// st's confidence to the fixed p50 ... p99.99 fields too.
func NewLatencyAt(h *hist.Histogram, div float64, st Stats) Latency {
	if h.Count() == 0 {
		return Latency{}
	}
	div = Divisor(div)
	st = st.orDefault()
	s := h.Summary()
	pct := func(p float64) Nanos {
		v, ok := h.PercentileAt(p, st.Confidence)
		return NanosOf(hist.Value{NS: v, OK: ok}, div)
	}
	return Latency{
		Count:       s.Count,
		Min:         float64(s.Min) / div,
		Mean:        finite(s.Mean) / div,
		Stdev:       finite(s.StdDev) / div,
		P50:         pct(50),
		P90:         pct(90),
		P99:         pct(99),
		P99_9:       pct(99.9),
		P99_99:      pct(99.99),
		Max:         float64(s.Max) / div,
		Confidence:  st.Confidence,
		Percentiles: quantiles(h, div, st),
	}
}

// Divisor is the effective histogram divisor of div: div itself, or 1 when
// div is not a positive finite number (older documents, bandwidth tests).
func Divisor(div float64) float64 {
	if !(div > 0) || math.IsInf(div, 0) {
		return 1
	}
	return div
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
