package fabric

import (
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
	var names []string // the title names only the percentiles drawn
	for mi, m := range plotMetrics {
		if drawn[mi] {
			names = append(names, m.name)
		}
	}
	return plot.SizeLines(rep.plotTitle(names, timed), "latency (µs)", lines, true, path)
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
