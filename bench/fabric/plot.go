package fabric

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// plotMetrics are the latency percentiles Plot draws, dashed by index.
var plotMetrics = []struct {
	name string
	get  func(l *result.Latency) result.Nanos
}{
	{"p50", func(l *result.Latency) result.Nanos { return l.P50 }},
	{"p99.9", func(l *result.Latency) result.Nanos { return l.P99_9 }},
}

// Plot draws the p50 and p99.9 latency (lat rows) of each fabric and op
// against message size, both axes on log scales, to path (.svg or .png):
// one color per fabric, one glyph per op, solid p50 and dashed p99.9
// lines. A TCP fabric is drawn with its own SEND results only. Percentiles
// that are n/a are left out; with nothing left, the error wraps
// plot.ErrNothingToPlot.
func (rep *Report) Plot(path string) error {
	var lines []plot.Line
	timed := map[string][]string{} // "RTT" or "RTT/2": the ops timed so
	drawn := make([]bool, len(plotMetrics))
	for fi, f := range rep.Fabrics {
		var order []string
		byOp := map[string][]plot.Line{} // one line per metric
		for ri := range rep.Rows {
			row := &rep.Rows[ri]
			c := row.Cells[fi]
			if row.Mode != result.ModeLat || c.Result == nil || c.Send {
				continue
			}
			if _, words, _ := timing(c.Result); !slices.Contains(timed[words], row.Op) {
				timed[words] = append(timed[words], row.Op)
			}
			ls := byOp[row.Op]
			if ls == nil {
				glyph := max(slices.Index(result.Ops, row.Op), 0)
				for mi, m := range plotMetrics {
					ls = append(ls, plot.Line{Name: f.Label + " " + row.Op + " " + m.name, Color: fi, Dash: mi, Glyph: glyph})
				}
				byOp[row.Op] = ls
				order = append(order, row.Op)
			}
			for mi, m := range plotMetrics {
				if n := m.get(&c.Result.Latency); n.OK && n.NS > 0 {
					drawn[mi] = true
					ls[mi].Sizes = append(ls[mi].Sizes, float64(row.SizeBytes))
					ls[mi].Ys = append(ls[mi].Ys, n.NS/1000)
				}
			}
		}
		for _, op := range order {
			lines = append(lines, byOp[op]...)
		}
	}
	var names, missing []string // the title names the percentiles drawn, and those it could not draw
	for mi, m := range plotMetrics {
		if drawn[mi] {
			names = append(names, m.name)
		} else {
			missing = append(missing, m.name)
		}
	}
	title := rep.plotTitle(names, timed)
	if len(missing) > 0 {
		title += "\n" + strings.Join(missing, " and ") + " not drawn: n/a in every test (too few samples)"
	}
	return plot.SizeLines(title, "latency (µs)", lines, true, path)
}

// PlotGaps says which of the lines Plot promises (p50 and p99.9 of each
// fabric's latency tests) it leaves out, in part or whole, because the
// percentile is n/a (too few samples): one line each, such as "p99.9 of
// RoCE rxe0 (rdma_rxe) send: n/a at 2B, 64K (too few samples), not
// drawn". report --plot prints them, so that no line goes missing unsaid.
func (rep *Report) PlotGaps() []string {
	var out []string
	for fi, f := range rep.Fabrics {
		type gap struct{ op, metric string }
		var order []gap
		sizes := map[gap][]string{}
		for ri := range rep.Rows {
			row := &rep.Rows[ri]
			c := row.Cells[fi]
			if row.Mode != result.ModeLat || c.Result == nil || c.Send {
				continue
			}
			for _, m := range plotMetrics {
				if n := m.get(&c.Result.Latency); !(n.OK && n.NS > 0) {
					g := gap{row.Op, m.name}
					if _, ok := sizes[g]; !ok {
						order = append(order, g)
					}
					sizes[g] = append(sizes[g], result.SizeName(row.SizeBytes))
				}
			}
		}
		for _, g := range order {
			out = append(out, fmt.Sprintf("%s of %s %s: n/a at %s (too few samples), not drawn", g.metric, f.Label, g.op, strings.Join(sizes[g], ", ")))
		}
	}
	return out
}

// plotTitle says what the plot shows (the percentiles names) and what
// each op's latency times.
func (rep *Report) plotTitle(names []string, timed map[string][]string) string {
	var parts []string
	for _, k := range []string{"RTT/2", "RTT"} {
		if ops := timed[k]; len(ops) > 0 {
			up := make([]string, len(ops))
			for i, op := range ops {
				up[i] = strings.ToUpper(op)
			}
			parts = append(parts, strings.Join(up, ", ")+" latency: "+k)
		}
	}
	title := strings.Join(names, " and ") + " latency against message size, per fabric"
	if len(parts) > 0 {
		title += "\n" + strings.Join(parts, "; ")
	}
	var sw []string
	rdma := 0
	for i := range rep.Fabrics {
		if !rep.Fabrics[i].TCP() {
			rdma++
		}
		if software(&rep.Fabrics[i]) {
			sw = append(sw, rep.Fabrics[i].Label)
		}
	}
	switch {
	case len(sw) == 0:
	case len(sw) == rdma:
		title += " (software RDMA)"
	default:
		title += "\n(software RDMA: " + strings.Join(sw, ", ") + ")"
	}
	return title
}
