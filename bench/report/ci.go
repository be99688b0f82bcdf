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

// perftestPercentiles are the percentiles the latency table always has,
// perftest's (t_typical, 99%, 99.9%), whatever --percentiles lists.
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

// tablePercentiles are the latency table's percentiles: perftest's (p50,
// p99, p99.9) and the reported ones, in ascending order.
func tablePercentiles(results []result.Result) []float64 {
	ps := slices.Clone(perftestPercentiles)
	for _, p := range reported(results) {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
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
// confidence interval in µs ("41.20 [40.90, 41.80]"), in ascending order,
// and a line that says how the intervals were made. Within width columns
// (0: no limit, --wide) a percentile n/a in every row is left out, and
// p90 and the highest percentiles give way to the width.
func WriteCITable(w io.Writer, results []result.Result, width int) error {
	ps := reported(results)
	slices.Sort(ps)
	t := Table{{Head: "op", Left: true}, {Head: "#bytes"}, {Head: "#samples"}}
	for _, p := range ps {
		t = append(t, Column{Head: result.PercentileLabel(p) + " [CI][usec]", Drop: dropTurn(p)})
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
	first := len(t) - len(ps) // the first percentile's column
	writeFitted(&b, t, rows, width, func(i int) bool {
		return i >= first && !slices.ContainsFunc(rows, func(r []string) bool { return r[i] != "n/a" })
	}, "n/a in every test: too few samples")
	b.WriteString(Note(fmt.Sprintf("[CI]: the %s %% confidence interval of each percentile, distribution-free: the order statistics whose ranks "+
		"the binomial distribution puts around q*n (n/a: the interval runs off the end of the data; %s)",
		strconv.FormatFloat(conf*100, 'f', -1, 64), hist.NARule(ps, conf))))
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
