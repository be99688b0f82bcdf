package plot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// metricName returns the display name of a Metrics entry: "p99.9" for
// "p99_9".
func metricName(m string) string {
	return strings.ReplaceAll(m, "_", ".")
}

// latencyMetric returns statistic m of l in ns, and whether it is present.
func latencyMetric(l result.Latency, m string) (float64, bool) {
	var n result.Nanos
	switch m {
	case "min":
		return l.Min, l.Count > 0
	case "mean":
		return l.Mean, l.Count > 0
	case "max":
		return l.Max, l.Count > 0
	case "p50":
		n = l.P50
	case "p90":
		n = l.P90
	case "p99":
		n = l.P99
	case "p99_9":
		n = l.P99_9
	case "p99_99":
		n = l.P99_99
	}
	return n.NS, n.OK && n.NS > 0
}

// timedWhat says what the latency of an op in a mode measures, given the
// histogram divisor.
func timedWhat(mode string, div float64) string {
	switch {
	case mode == result.ModeBW:
		return "completion latency in bw mode (post to completion)"
	case result.Divisor(div) == 2:
		return "half round trip (RTT/2)"
	case result.Divisor(div) == 1:
		return "full round trip (RTT)"
	}
	return fmt.Sprintf("round trip / %g", div)
}

// latencyTitle says what the latencies of tests are, op by op, then what the
// plot shows.
func latencyTitle(tests plotTests, what string) string {
	type group struct {
		what string
		ops  []string
	}
	var groups []group
	for _, t := range tests {
		w := timedWhat(t.r.Mode, t.r.HistogramDivisor)
		op := strings.ToUpper(t.r.Op)
		i := slices.IndexFunc(groups, func(g group) bool { return g.what == w })
		if i < 0 {
			groups = append(groups, group{what: w})
			i = len(groups) - 1
		}
		if !slices.Contains(groups[i].ops, op) {
			groups[i].ops = append(groups[i].ops, op)
		}
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = strings.Join(g.ops, ", ") + " latency: " + g.what
	}
	line := strings.Join(parts, "; ")
	if len(line) > 90 {
		line = strings.Join(parts, ";\n")
	}
	sub := what
	if sizes := distinct(tests, func(t plotTest) int { return t.r.SizeBytes }); len(sizes) == 1 && !strings.Contains(what, "size") {
		sub += fmt.Sprintf(", %d-byte messages", sizes[0])
	}
	return titleWithSoftware(tests, line+"\n"+sub)
}

func opList(tests plotTests) string {
	ops := distinct(tests, func(t plotTest) string { return strings.ToUpper(t.r.Op) })
	return strings.Join(ops, ", ")
}

// titleWithSoftware appends "(software RDMA)" to title when a document of
// tests ran on software RDMA (rxe, siw), naming them unless all did.
func titleWithSoftware(tests plotTests, title string) string {
	var sw, all []string
	for _, t := range tests {
		if !slices.Contains(all, t.label) {
			all = append(all, t.label)
			if t.doc.Env.SoftwareRDMA {
				sw = append(sw, t.label)
			}
		}
	}
	switch {
	case len(sw) == 0:
		return title
	case len(sw) == len(all):
		return title + " (software RDMA)"
	}
	return title + " (software RDMA: " + strings.Join(sw, ", ") + ")"
}
