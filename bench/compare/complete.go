package compare

// What the gate refuses to pass (docs/regression.md): a new run that lacks
// tests of the baseline or is partial (unless the user asks for a subset),
// a limit on a percentile the documents do not record (a usage error), and
// a limit no test could judge because its figure is n/a on both sides
// ("cannot tell").

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// IncompleteError is a new run that does not cover its baseline: tests of
// the baseline it lacks, or a partial run ("partial": true). compare
// --baseline exits 1 with it unless --subset is given.
type IncompleteError struct {
	Missing []result.Key // the baseline's tests the new run lacks
	Partial bool         // the new run says "partial": true
	Tests   int          // the baseline's tests
}

func (e *IncompleteError) Error() string {
	var parts []string
	if e.Partial {
		parts = append(parts, "the new run is partial (it ended before its last test)")
	}
	if len(e.Missing) > 0 {
		names := make([]string, 0, min(len(e.Missing), 5))
		for _, k := range e.Missing[:min(len(e.Missing), 5)] {
			names = append(names, k.String())
		}
		more := ""
		if len(e.Missing) > 5 {
			more = fmt.Sprintf(", ... (%d more)", len(e.Missing)-5)
		}
		parts = append(parts, fmt.Sprintf("the new run lacks %d of the baseline's %d tests: %s%s", len(e.Missing), e.Tests, strings.Join(names, ", "), more))
	}
	return "the gate did not check the whole baseline: " + strings.Join(parts, "; ") + " (--subset gates only the tests the new run has)"
}

// IncompleteErr returns an *IncompleteError when the new run lacks tests
// of the baseline or is partial and subset is false; else nil.
func (g *GateReport) IncompleteErr(subset bool) error {
	if subset || (len(g.Missing) == 0 && !g.Partial) {
		return nil
	}
	return &IncompleteError{Missing: g.Missing, Partial: g.Partial, Tests: g.BaseTests}
}

// CannotTellError is a --max-regress limit that no test could judge: its
// figure is n/a in both runs of every test it applies to (too few samples
// for that percentile). compare --baseline exits 9 with it, as an
// underpowered gate under --require-power does: the gate cannot see.
type CannotTellError struct {
	Limits []string // the limits' metric names, e.g. "p99_9"
}

func (e *CannotTellError) Error() string {
	return fmt.Sprintf("cannot tell: %s n/a in both runs of every test (too few samples for the percentile: raise -n or -D, or drop the limit)",
		strings.Join(e.Limits, ", "))
}

// CannotTellErr returns a *CannotTellError naming the limits that no test
// could judge because they were n/a on both sides; else nil.
func (g *GateReport) CannotTellErr() error {
	if len(g.Unjudged) == 0 {
		return nil
	}
	return &CannotTellError{Limits: g.Unjudged}
}

// Unrecorded returns the metrics of limits that a document does not
// record: a percentile other than p50 ... p99.99 that no result of doc
// lists among its percentiles (--percentiles). A limit on it can never be
// judged: compare --baseline refuses it as a usage error.
func Unrecorded(limits map[string]float64, docs ...*result.Document) []string {
	var out []string
	for k := range limits {
		m, ok := lookupMetric(k)
		if !ok || m.pct == 0 || isFixedPercentile(m.key) {
			continue
		}
		for _, d := range docs {
			if !recordsPercentile(d, m.pct) {
				out = append(out, m.name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

func isFixedPercentile(key string) bool {
	switch key {
	case MetricP50, MetricP90, MetricP99, MetricP99_9, MetricP99_99:
		return true
	}
	return false
}

func recordsPercentile(d *result.Document, p float64) bool {
	for i := range d.Results {
		if _, ok := d.Results[i].Latency.Quantile(p); ok {
			return true
		}
	}
	return false
}
