package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// Percentiles beyond perftest's columns, and their confidence intervals.

// perftestPercentiles are the percentiles the latency table always shows,
// in perftest's columns (t_typical, 99%, 99.9%).
var perftestPercentiles = []float64{50, 99, 99.9}

// reported is the percentile list of results: the first result's
// Latency.Percentiles (one run reports one list), or the legacy fields.
func reported(results []result.Result) []float64 {
	for _, r := range results {
		if len(r.Latency.Percentiles) > 0 {
			var ps []float64
			for _, q := range r.Latency.Percentiles {
				ps = append(ps, q.P)
			}
			return ps
		}
	}
	return slices.Clone(result.DefaultPercentiles) // what the fixed fields hold
}

// extraPercentiles are the reported percentiles without a perftest column.
func extraPercentiles(results []result.Result) []float64 {
	var out []float64
	for _, p := range reported(results) {
		if !slices.Contains(perftestPercentiles, p) {
			out = append(out, p)
		}
	}
	return out
}

// PercentileOf is l's percentile p with its interval: from
// l.Percentiles, or, in older documents, the fixed field without one.
func PercentileOf(l *result.Latency, p float64) result.Quantile {
	if q, ok := l.Quantile(p); ok {
		return q
	}
	q := result.Quantile{P: p}
	if f := l.Fixed(p); f != nil {
		q.Value = *f
	}
	return q
}

// WriteCITable writes, for each result, every reported percentile with its
// confidence interval in µs ("41.20 [40.90, 41.80]"), and a line that says
// how the intervals were made.
func WriteCITable(w io.Writer, results []result.Result) error {
	ps := reported(results)
	t := Table{{Head: "op", Left: true}, {Head: "#bytes"}, {Head: "#samples"}}
	for _, p := range ps {
		t = append(t, Column{Head: result.PercentileLabel(p) + " [CI][usec]"})
	}
	conf := hist.DefaultConfidence
	var rows [][]string
	for _, r := range results {
		if r.Latency.Confidence > 0 {
			conf = r.Latency.Confidence
		}
		row := []string{r.Op, strconv.Itoa(r.SizeBytes), strconv.FormatInt(r.Latency.Count, 10)}
		for _, p := range ps {
			row = append(row, FormatCI(PercentileOf(&r.Latency, p)))
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	t.Write(&b, rows)
	fmt.Fprintf(&b, "[CI]: the %s %% confidence interval of each percentile, distribution-free: the order statistics whose ranks "+
		"the binomial distribution puts around q*n (n/a: the interval runs off the end of the data; %s)\n",
		strconv.FormatFloat(conf*100, 'f', -1, 64), hist.NARule(ps, conf))
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatCI formats a percentile and its interval in µs: "41.20 [40.90,
// 41.80]", or "n/a".
func FormatCI(q result.Quantile) string {
	if !q.Value.OK {
		return "n/a"
	}
	if !q.CILow.OK || !q.CIHigh.OK {
		return q.Value.US()
	}
	return q.Value.US() + " [" + q.CILow.US() + ", " + q.CIHigh.US() + "]"
}
