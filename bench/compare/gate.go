package compare

import (
	"cmp"
	"fmt"
	"slices"
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
	// P is the Mann-Whitney p-value of the change when both sides ran
	// several times (--repeat); Base and New are then the runs' medians.
	// Repeated is false for single runs, where P means nothing.
	P        float64
	Repeated bool
}

// Format describes r on one line with bandwidth in unit, such as
// "send lat 2B: p99 41.20 us -> 49.80 us (+20.9% > 10%)" or
// "write bw 64K: bw 1200.00 MiB/sec -> 1100.00 MiB/sec (-8.3% < -5%)".
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
	sig := ""
	if r.Repeated {
		sig = fmt.Sprintf(", p=%.3f", r.P)
	}
	return fmt.Sprintf("%s: %s %s %s -> %s %s (%+.1f%% %s%%%s)", r.Test, m.name,
		m.format(r.Base, unit), ul, m.format(r.New, unit), ul, r.Change*100, cmp, sig)
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
	return fmt.Sprintf("%d %s:%s", len(parts), n, oneALine(parts))
}

// oneALine lists parts after a count's colon: one on the same line, more
// each on a line of its own, indented.
func oneALine(parts []string) string {
	if len(parts) == 1 {
		return " " + parts[0]
	}
	return "\n  " + strings.Join(parts, "\n  ")
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
	// Changes are every check of repeated tests (both sides with --repeat),
	// regressed or not, for the benchstat-style lines (FormatChange).
	Changes []Regression
	// Alpha is the significance level the repeated tests were held to.
	Alpha float64
	// Detectable is, for every check of repeated tests, the smallest
	// change the gate could detect at Alpha with probability Power
	// (power.go); Power is that probability.
	Detectable []Detectable
	Power      float64
	// SingleRun are the tests compared on single runs, whose noise the
	// gate cannot judge.
	SingleRun []result.Key
	// Unestimated are the checks of repeated tests whose detectable change
	// could not be estimated ("send lat 2B p99": a side has fewer than two
	// positive values of the figure).
	Unestimated []string
	// EnvDiffs are the environment fields that differ between the
	// baseline and the new run (EnvDiffs).
	EnvDiffs []EnvDiff
	// Missing are the baseline's tests the new run lacks, BaseTests the
	// baseline's tests, Partial whether the new run is partial: the gate
	// did not see the whole baseline (IncompleteErr).
	Missing   []result.Key
	BaseTests int
	Partial   bool
	// Unjudged are the limits (metric names) that no test could judge
	// because the figure was n/a in both runs (CannotTellErr).
	Unjudged []string
}

// Underpowered returns the checks whose detectable change exceeds their
// limit: a regression of the limit's size could pass unseen.
func (g *GateReport) Underpowered() []Detectable {
	var out []Detectable
	for _, d := range g.Detectable {
		if d.Underpowered() {
			out = append(out, d)
		}
	}
	return out
}

// PowerErr returns a *PowerError when the gate could not see a change of
// the limits' size, in an underpowered check or a test of single runs;
// else nil (compare --require-power).
func (g *GateReport) PowerErr() error {
	u := g.Underpowered()
	if len(u) == 0 && len(g.SingleRun) == 0 && len(g.Unestimated) == 0 {
		return nil
	}
	return &PowerError{Underpowered: u, SingleRun: g.SingleRun, Unestimated: g.Unestimated}
}

// Err returns a *RegressionError listing the regressions and exceeded
// counter limits, or nil.
func (g *GateReport) Err() error {
	if len(g.Regressions) == 0 && len(g.Counters) == 0 {
		return nil
	}
	return &RegressionError{Regressions: g.Regressions, Counters: g.Counters}
}

// DefaultAlpha is the significance level of the gate on repeated runs.
const DefaultAlpha = 0.05

// Gate is GateAlpha at DefaultAlpha.
func Gate(base, cur *result.Document, limits map[string]float64) *GateReport {
	return GateAlpha(base, cur, limits, DefaultAlpha)
}

// GateAlpha is GateWith at alpha and DefaultPower.
func GateAlpha(base, cur *result.Document, limits map[string]float64, alpha float64) *GateReport {
	return GateWith(base, cur, limits, GateOptions{Alpha: alpha, Power: DefaultPower})
}

// GateOptions are the statistics of the gate on repeated runs.
type GateOptions struct {
	Alpha float64 // significance level, in (0, 0.5]
	Power float64 // probability of detection the detectable change is stated at, in (0, 1)
}

// GateWith compares cur against base for every test present in both and
// every metric in limits (canonical name → allowed change as a fraction,
// as from ParseMaxRegress). A latency metric regresses when cur > base ×
// (1+limit), bw and mpps when cur < base × (1−limit); bw and mpps are
// checked in bw tests only, latency metrics in both modes (completion
// latency in bw tests). When both results hold several runs (--repeat),
// the medians of the runs are compared and a change counts only when the
// Mann-Whitney U test of the two sets of runs is also significant (p <
// alpha); every such check is listed in Changes, and in Detectable with
// the smallest change the runs could show (power.go). Single runs are compared
// as they are, with a note that noise cannot be judged. A metric that is
// n/a on either side is skipped with a note; tests present in only one
// document are noted as not compared. The environment fields that differ
// are in EnvDiffs.
func GateWith(base, cur *result.Document, limits map[string]float64, opt GateOptions) *GateReport {
	alpha := opt.Alpha
	g := &GateReport{Alpha: alpha, Power: opt.Power, EnvDiffs: EnvDiffs(base, cur), Partial: cur.Partial}
	checked, naBoth := map[string]int{}, map[string]int{}
	var keys []metricDef
	for k := range limits {
		m, ok := lookupMetric(k)
		if !ok {
			g.Notes = append(g.Notes, fmt.Sprintf("metric %q unknown, not checked", k))
			continue
		}
		keys = append(keys, m)
	}
	sortMetrics(keys)
	single := false
	c := Compare([]*result.Document{base, cur}, nil)
	for _, t := range c.Tests {
		b, n := t.Results[0], t.Results[1]
		switch {
		case b == nil:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (only in the new run)", t.Key))
			continue
		case n == nil:
			g.BaseTests++
			g.Missing = append(g.Missing, t.Key)
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (only in the baseline)", t.Key))
			continue
		}
		g.BaseTests++
		g.Tests++
		repeated := len(b.Runs) > 1 && len(n.Runs) > 1
		if !repeated {
			single = true
			g.SingleRun = append(g.SingleRun, t.Key)
		} else if mp := MinP(len(b.Runs), len(n.Runs)); mp >= alpha {
			g.Notes = append(g.Notes, fmt.Sprintf("%s: %d against %d runs cannot reach p < %g (the smallest p-value is %.3f): add runs (--repeat)",
				t.Key, len(b.Runs), len(n.Runs), alpha, mp))
		}
		for _, m := range keys {
			if !m.appliesTo(t.Key.Mode) {
				continue
			}
			var bv, nv, p float64
			var bok, nok bool
			var det Detectable
			detOK := false
			if repeated {
				bs, ns := m.runValues(b), m.runValues(n)
				bok, nok = len(bs) > 0, len(ns) > 0
				if bok && nok {
					p, _, _ = MannWhitney(bs, ns)
					det, detOK = detectable(t.Key, m, b, n, bs, ns, limits[m.key], alpha, opt.Power)
					bv, nv = median(bs), median(ns)
				}
			} else {
				bv, bok = m.value(b)
				nv, nok = m.value(n)
			}
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
				if !bok && !nok {
					naBoth[m.key]++
				}
				g.Notes = append(g.Notes, fmt.Sprintf("%s: %s not checked (%s)", t.Key, m.key, why))
				continue
			}
			g.Checked++
			checked[m.key]++
			limit := limits[m.key]
			worse := nv > bv*(1+limit)
			if m.rate {
				worse = nv < bv*(1-limit)
			}
			ch := Regression{Test: t.Key, Metric: m.key, Base: bv, New: nv, Change: nv/bv - 1, Limit: limit, P: p, Repeated: repeated}
			if repeated {
				g.Changes = append(g.Changes, ch)
				worse = worse && p < alpha
				if detOK {
					g.Detectable = append(g.Detectable, det)
				} else {
					g.Unestimated = append(g.Unestimated, t.Key.String()+" "+m.key)
					g.Notes = append(g.Notes, fmt.Sprintf("%s: %s: the detectable change cannot be estimated (a side has fewer than 2 positive values)", t.Key, m.key))
				}
			}
			if worse {
				g.Regressions = append(g.Regressions, ch)
			}
		}
	}
	if single {
		g.Notes = append(g.Notes, "single runs: the gate cannot judge noise; run both sides with --repeat K (K >= 4) for a significance test")
	}
	for _, m := range keys {
		if checked[m.key] == 0 && naBoth[m.key] > 0 {
			g.Unjudged = append(g.Unjudged, m.name)
		}
	}
	return g
}

// FormatChange describes a check of repeated runs as benchstat does:
// "send lat 2B: p99 41.20 us -> 42.10 us (+2.2%, p=0.310 ~)", where ~
// marks a change that is not significant at alpha.
func (r Regression) FormatChange(unit string, alpha float64) string {
	m := metricByKey(r.Metric)
	ul := m.unitLabel(unit)
	mark := ""
	if !(r.P < alpha) {
		mark = " ~"
	}
	return fmt.Sprintf("%s: %s %s %s -> %s %s (%+.1f%%, p=%.3f%s)", r.Test, m.name,
		m.format(r.Base, unit), ul, m.format(r.New, unit), ul, r.Change*100, r.P, mark)
}

// runValues are m's values in r's runs where backed.
func (m metricDef) runValues(r *result.Result) []float64 {
	var out []float64
	for _, f := range r.Runs {
		if v, ok := f.RunFigure(m.figure()); ok {
			out = append(out, v)
		}
	}
	return out
}

// figure is m's name among result.Spread figures.
func (m metricDef) figure() string {
	switch m.key {
	case MetricBW:
		return "bw_mb_per_s"
	case MetricMpps:
		return "mpps"
	}
	return m.name
}

// median is the median of vals (not empty); vals is reordered.
func median(vals []float64) float64 {
	slices.Sort(vals)
	n := len(vals)
	if n%2 == 1 {
		return vals[n/2]
	}
	return (vals[n/2-1] + vals[n/2]) / 2
}

// sortMetrics orders ms as metricDefs, then other percentiles by percent.
func sortMetrics(ms []metricDef) {
	rank := func(m metricDef) int {
		for i, d := range metricDefs {
			if d.key == m.key {
				return i
			}
		}
		return len(metricDefs)
	}
	slices.SortFunc(ms, func(a, b metricDef) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return cmp.Compare(a.pct, b.pct)
	})
}
