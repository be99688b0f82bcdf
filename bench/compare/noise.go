package compare

import (
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Noise: how much each figure moves from run to run with nothing changed,
// from repeated baseline runs, and the gate limits that would not flag it.

// NoiseFigure is one test × metric over the baseline runs.
type NoiseFigure struct {
	Test   result.Key
	Metric string // canonical metric name
	Runs   int
	Median float64 // in the metric's JSON unit
	CV     float64 // coefficient of variation (population), 0.05 = 5 %
	// Worst is the largest move of a run from the median in the bad
	// direction (latency up, bandwidth down), as a fraction of the median.
	Worst float64
}

// NoiseReport is the outcome of Noise.
type NoiseReport struct {
	Figures []NoiseFigure
	// Suggested is the suggested --max-regress limit per metric: for the
	// single-run gate, the larger of 3 CVs and the worst move seen, over
	// every test, rounded up to a whole percent (at least 1 %).
	Suggested map[string]float64
}

// Noise collects, per test and metric, the values of every run in docs:
// the runs of repeated results (--repeat), and each document's own
// figures when a result ran once (several single-run files of the same
// tests work too).
func Noise(docs []*result.Document, metrics []string) *NoiseReport {
	type key struct {
		t result.Key
		m string
	}
	vals := map[key][]float64{}
	var order []key
	for _, d := range docs {
		for i := range d.Results {
			r := &d.Results[i]
			t := result.KeyOf(r)
			for _, m := range metricsFor(metrics, r.Mode) {
				k := key{t, m.key}
				var vs []float64
				if len(r.Runs) > 1 {
					vs = m.runValues(r)
				} else if v, ok := m.value(r); ok {
					vs = []float64{v}
				}
				if len(vs) == 0 {
					continue
				}
				if _, seen := vals[k]; !seen {
					order = append(order, k)
				}
				vals[k] = append(vals[k], vs...)
			}
		}
	}
	rep := &NoiseReport{Suggested: map[string]float64{}}
	for _, k := range order {
		vs := vals[k]
		if len(vs) < 2 {
			continue
		}
		m := metricByKey(k.m)
		med := median(append([]float64{}, vs...))
		var sum, sq, worst float64
		for _, v := range vs {
			sum += v
		}
		mean := sum / float64(len(vs))
		for _, v := range vs {
			sq += (v - mean) * (v - mean)
			move := (v - med) / med
			if m.rate {
				move = -move
			}
			worst = math.Max(worst, move)
		}
		f := NoiseFigure{Test: k.t, Metric: k.m, Runs: len(vs), Median: med, Worst: worst}
		if mean != 0 {
			f.CV = math.Sqrt(sq/float64(len(vs))) / mean
		}
		rep.Figures = append(rep.Figures, f)
		s := math.Ceil(100*math.Max(3*f.CV, worst)) / 100
		rep.Suggested[k.m] = math.Max(rep.Suggested[k.m], math.Max(s, 0.01))
	}
	return rep
}

// SuggestedFlag is the suggested limits as a --max-regress value,
// e.g. "p50=4%,p99=31%,bw=3%".
func (n *NoiseReport) SuggestedFlag() string {
	var ms []metricDef
	for k := range n.Suggested {
		ms = append(ms, metricByKey(k))
	}
	sortMetrics(ms)
	var parts []string
	for _, m := range ms {
		if m.rate {
			n.Suggested[m.key] = math.Min(n.Suggested[m.key], 0.99)
		}
		parts = append(parts, m.key+"="+strconv.FormatFloat(math.Round(n.Suggested[m.key]*100), 'f', -1, 64)+"%")
	}
	return strings.Join(parts, ",")
}

// Write prints one line per test and metric (runs, median, CV, worst move)
// and the suggested limits.
func (n *NoiseReport) Write(w io.Writer, unit string) error {
	t := report.Table{{Head: "test", Left: true}, {Head: "metric", Left: true}, {Head: "runs"}, {Head: "median"},
		{Head: "CV[%]"}, {Head: "worst[%]"}}
	var rows [][]string
	sort.SliceStable(n.Figures, func(i, j int) bool { return n.Figures[i].Test.String() < n.Figures[j].Test.String() })
	for _, f := range n.Figures {
		m := metricByKey(f.Metric)
		rows = append(rows, []string{f.Test.String(), m.rowLabel(f.Test.Mode, unit), strconv.Itoa(f.Runs),
			m.format(f.Median, unit), strconv.FormatFloat(f.CV*100, 'f', 1, 64), strconv.FormatFloat(f.Worst*100, 'f', 1, 64)})
	}
	var b strings.Builder
	if len(rows) == 0 {
		b.WriteString("no figure has two or more runs: give repeated results (--repeat K) or several result files of the same tests\n")
	} else {
		t.Write(&b, rows)
		note := report.Note
		b.WriteString(note("worst: the largest move of one run from the median in the bad direction (latency up, bandwidth down)"))
		b.WriteString(note("suggested single-run limits (3 CVs or the worst move, whichever is larger): --max-regress " + n.SuggestedFlag()))
		b.WriteString(note("with --repeat on both sides the gate also requires p < --alpha (Mann-Whitney U test), so noise alone rarely trips a limit"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
