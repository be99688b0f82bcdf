package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Regression is a metric of a test that got worse than its limit allows.
type Regression struct {
	Test   result.Key
	Metric string  // canonical metric name, e.g. "p99"
	Base   float64 // baseline value: ns for latency, MB/s for bw, Mpps for mpps
	New    float64 // the new run's value, in the same unit
	Change float64 // New/Base - 1: +0.209 is 20.9 % more
	Limit  float64 // the allowed change as a fraction, e.g. 0.10
}

// Format describes r on one line with bandwidth in unit, such as
// "send lat 2B: p99 41.20 us -> 49.80 us (+20.9% > 10%)" or
// "write bw 65536B: bw 1200.00 MiB/sec -> 1100.00 MiB/sec (-8.3% < -5%)".
func (r Regression) Format(unit string) string {
	if checkUnit(unit) != nil {
		unit = result.UnitMiB
	}
	m := metricByKey(r.Metric)
	ul := m.unitLabel(unit)
	limit := strconv.FormatFloat(r.Limit*100, 'g', 4, 64)
	cmp := "> " + limit
	if m.rate {
		cmp = "< -" + limit
	}
	return fmt.Sprintf("%s: %s %s %s -> %s %s (%+.1f%% %s%%)", r.Test, m.name,
		m.format(r.Base, unit), ul, m.format(r.New, unit), ul, r.Change*100, cmp)
}

// String is Format with bandwidth in MiB/sec.
func (r Regression) String() string { return r.Format(result.UnitMiB) }

// RegressionError reports the regressions Gate found and the counter limits
// CheckCounters found exceeded.
type RegressionError struct {
	Regressions []Regression
	Counters    []CounterExcess
}

func (e *RegressionError) Error() string {
	var parts []string
	for _, r := range e.Regressions {
		parts = append(parts, fmt.Sprintf("%s %s %+.1f%%", r.Test, r.Metric, r.Change*100))
	}
	for _, c := range e.Counters {
		parts = append(parts, fmt.Sprintf("%s %s %s %d > %d", c.Test, c.Side, c.Name, c.Value, c.Max))
	}
	n := "regressions"
	if len(parts) == 1 {
		n = "regression"
	}
	return fmt.Sprintf("%d %s: %s", len(parts), n, strings.Join(parts, "; "))
}

// GateReport is the outcome of Gate.
type GateReport struct {
	Regressions []Regression
	Notes       []string // skipped metrics (n/a) and tests not compared
	Tests       int      // tests present in both documents
	Checked     int      // test × metric pairs compared
	// Counters are the counter limits exceeded (CheckCounters), and
	// CountersChecked the test × side × limit triples checked.
	Counters        []CounterExcess
	CountersChecked int
}

// Err returns a *RegressionError listing the regressions and exceeded
// counter limits, or nil.
func (g *GateReport) Err() error {
	if len(g.Regressions) == 0 && len(g.Counters) == 0 {
		return nil
	}
	return &RegressionError{Regressions: g.Regressions, Counters: g.Counters}
}

// Gate compares cur against base for every test present in both and every
// metric in limits (canonical name → allowed change as a fraction, as from
// ParseMaxRegress). A latency metric regresses when cur > base × (1+limit),
// bw and mpps when cur < base × (1−limit); bw and mpps are checked in bw
// tests only, latency metrics in both modes (completion latency in bw
// tests). A metric that is n/a on either side is skipped with a note; tests
// present in only one document are noted as not compared.
func Gate(base, cur *result.Document, limits map[string]float64) *GateReport {
	g := &GateReport{}
	var keys []metricDef
	for _, m := range metricDefs {
		if _, ok := limits[m.key]; ok {
			keys = append(keys, m)
		}
	}
	for k := range limits {
		if _, ok := lookupMetric(k); !ok {
			g.Notes = append(g.Notes, fmt.Sprintf("metric %q unknown, not checked", k))
		}
	}
	c := Compare([]*result.Document{base, cur}, nil)
	for _, t := range c.Tests {
		b, n := t.Results[0], t.Results[1]
		switch {
		case b == nil:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (only in the new run)", t.Key))
			continue
		case n == nil:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (only in the baseline)", t.Key))
			continue
		}
		g.Tests++
		for _, m := range keys {
			if !m.appliesTo(t.Key.Mode) {
				continue
			}
			bv, bok := m.value(b)
			nv, nok := m.value(n)
			var why string
			switch {
			case !bok && !nok:
				why = "n/a in both runs"
			case !bok:
				why = "n/a in the baseline"
			case !nok:
				why = "n/a in the new run"
			case bv <= 0:
				why = "zero in the baseline"
			}
			if why != "" {
				g.Notes = append(g.Notes, fmt.Sprintf("%s: %s not checked (%s)", t.Key, m.key, why))
				continue
			}
			g.Checked++
			limit := limits[m.key]
			worse := nv > bv*(1+limit)
			if m.rate {
				worse = nv < bv*(1-limit)
			}
			if worse {
				g.Regressions = append(g.Regressions, Regression{Test: t.Key, Metric: m.key,
					Base: bv, New: nv, Change: nv/bv - 1, Limit: limit})
			}
		}
	}
	return g
}
