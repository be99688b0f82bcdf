package plot

import (
	"fmt"
	"math"

	"github.com/rdmabench/rdmabench/bench/result"
)

// KindLoad draws latency against offered load (--load-sweep).
const KindLoad = "load"

// LoadSweeps draws each document's latency-against-load sweeps: p50, p99
// and p99.9 in µs (log scale) against the offered load in % of the load's
// peak, one color per sweep, one dash per percentile. The knee is named in
// the title when there is one sweep.
func LoadSweeps(docs []*result.Document, labels []string, path string) error {
	var lines []Line
	title := "latency against offered load"
	n := 0
	for i, d := range docs {
		for _, s := range d.LoadSweeps {
			name := s.Test
			if len(docs) > 1 && i < len(labels) {
				name = labels[i] + ": " + name
			}
			var xs, p50, p99, p999 []float64
			for _, p := range s.Points {
				xs = append(xs, p.Offered*100)
				p50, p99, p999 = append(p50, us(p.P50)), append(p99, us(p.P99)), append(p999, us(p.P99_9))
			}
			for j, l := range []struct {
				pct string
				ys  []float64
			}{{"p50", p50}, {"p99", p99}, {"p99.9", p999}} {
				lines = append(lines, Line{Name: name + " " + l.pct, Sizes: xs, Ys: l.ys, Color: n, Dash: j, Glyph: j})
			}
			n++
			if s.Knee != nil {
				title = fmt.Sprintf("%s (knee of %s at %g%%)", title, s.Test, *s.Knee*100)
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: no document has a load sweep (run with --load-qps N --load-sweep 10%%,50%%,90%%)", ErrNothingToPlot)
	}
	if n > 1 {
		title = "latency against offered load"
	}
	return Lines(title, "offered load (% of the load's peak)", "latency (µs)", lines, true, path)
}

// us is n in µs, NaN when n/a (left out of the line).
func us(n result.Nanos) float64 {
	if !n.OK {
		return math.NaN()
	}
	return n.NS / 1000
}
