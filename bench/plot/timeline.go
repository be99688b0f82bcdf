package plot

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rdmabench/rdmabench/bench/result"
)

// KindTimeline draws one test's intervals: latency and port counters on
// one time axis.
const KindTimeline = "timeline"

// Timeline draws the reporting intervals of one test (a duration-mode run,
// or one with --interval): above, the p50 and p99 latency of each interval
// in µs (as latency_ns: RTT/2 for SEND and WRITE latency); below, on the
// same time axis, how much each port counter moved in each interval, one
// line per side and counter (client solid, server dashed; no point where
// that side's counters are missing). Each point is at
// the middle of its interval, in seconds from the test's start. The
// counters drawn are sel.Counters (names as in the JSON's deltas), or, when
// it is empty, every counter that signals trouble (result.TroubleCounters:
// retransmissions, out-of-sequence, RNR, ECN/CNP, ...) and moved. The test
// is the first of docs with intervals that sel matches.
func Timeline(docs []*result.Document, labels []string, sel Selection, path string) error {
	if _, err := Format(path); err != nil {
		return err
	}
	tests, err := selectOrErr(docs, labels, sel)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tests, func(t plotTest) bool { return len(t.r.Intervals) > 0 })
	if i < 0 {
		return fmt.Errorf("plot: %w: no selected test has intervals (run with -D/--duration or --interval)", ErrNothingToPlot)
	}
	t := tests[i]
	ivs := t.r.Intervals
	end := float64(ivs[len(ivs)-1].EndNS) / 1e9
	mid := func(iv result.Interval) float64 { return float64(iv.StartNS+iv.EndNS) / 2 / 1e9 }

	lat := newFigure()
	var ys []float64
	for j, m := range []struct {
		name string
		v    func(result.Interval) result.Nanos
	}{{"p50", func(iv result.Interval) result.Nanos { return iv.P50 }}, {"p99", func(iv result.Interval) result.Nanos { return iv.P99 }}} {
		var xys plotter.XYs
		for _, iv := range ivs {
			if v := us(m.v(iv)); !math.IsNaN(v) && v > 0 {
				xys = append(xys, plotter.XY{X: mid(iv), Y: v})
				ys = append(ys, v)
			}
		}
		if len(xys) > 0 {
			lat.addLine(xys, m.name, j, j, 0, true)
		}
	}
	if len(ys) == 0 {
		return fmt.Errorf("plot: %w: %s: every interval's p50 and p99 are n/a (too few samples)", ErrNothingToPlot, t.name())
	}
	lat.p.Title.Text = titleWithSoftware(plotTests{t}, fmt.Sprintf("%s: latency and port counters per interval\n%s latency: %s",
		t.name(), strings.ToUpper(t.r.Op), timedWhat(t.r.Mode, t.r.HistogramDivisor)))
	lat.p.Y.Label.Text = "latency (µs)"
	lat.p.X.Label.Text = "time since the test's start (s)"
	lat.valueAxis(&lat.p.Y, &lat.yt, ys, true, false)

	cnt := newFigure()
	series := counterSeries(ivs, sel.Counters)
	hasCounters := slices.ContainsFunc(ivs, func(iv result.Interval) bool { return iv.Counters != nil })
	for k, s := range series {
		var xys plotter.XYs
		for j, iv := range ivs {
			if !math.IsNaN(s.values[j]) {
				xys = append(xys, plotter.XY{X: mid(iv), Y: s.values[j]})
			}
		}
		dash := 0
		if s.side == "server" {
			dash = 1
		}
		cnt.addLine(xys, s.side+" "+s.name, k, k, dash, true)
	}
	switch {
	case len(series) > 0:
		cnt.p.Title.Text = "port counters: how much each moved in the interval"
	case !hasCounters:
		cnt.p.Title.Text = "port counters: none in these intervals (an older rdmabench, or unreadable counters)"
	case len(sel.Counters) > 0:
		cnt.p.Title.Text = "port counters: " + strings.Join(sel.Counters, ", ") + " did not move"
	default:
		cnt.p.Title.Text = "port counters: no trouble counter moved (retransmissions, out-of-sequence, RNR, ECN/CNP, ...)"
	}
	if len(series) == 0 { // an empty panel still shares the time axis
		var xys plotter.XYs
		for _, iv := range ivs {
			xys = append(xys, plotter.XY{X: mid(iv), Y: 0})
		}
		cnt.addLine(xys, "nothing moved", 7, 0, 0, false)
	}
	cnt.p.Y.Label.Text = "counter delta per interval"
	cnt.p.X.Label.Text = "time since the test's start (s)"
	cnt.p.Y.Min = 0
	for _, f := range []*figure{lat, cnt} {
		f.p.X.Min, f.p.X.Max = 0, end
	}
	return saveStacked(path, lat, cnt)
}

// counterLine is one side's counter over a test's intervals.
type counterLine struct {
	side, name string
	values     []float64 // per interval; 0 where it did not move, NaN where the side has no counters
}

// sidesOf returns the two sides' counters of an interval (nil: none).
func sidesOf(iv result.Interval) [2]*result.PortCounters {
	if iv.Counters == nil {
		return [2]*result.PortCounters{}
	}
	return [2]*result.PortCounters{iv.Counters.Client, iv.Counters.Server}
}

var sideNames = [2]string{"client", "server"}

// counterSeries returns the counters of ivs to draw, client before server,
// each sorted by name: those named in names (either side), or, when names
// is empty, the trouble counters (result.CounterCategory) that moved.
func counterSeries(ivs []result.Interval, names []string) []counterLine {
	type key struct {
		side int
		name string
	}
	moved := map[key]bool{}
	for _, iv := range ivs {
		for side, p := range sidesOf(iv) {
			if p == nil {
				continue
			}
			for n := range p.Deltas {
				if len(names) > 0 && slices.Contains(names, n) || len(names) == 0 && result.CounterCategory(n) != "" {
					moved[key{side, n}] = true
				}
			}
		}
	}
	var out []counterLine
	for k := range moved {
		l := counterLine{side: sideNames[k.side], name: k.name, values: make([]float64, len(ivs))}
		for j, iv := range ivs {
			if p := sidesOf(iv)[k.side]; p != nil {
				l.values[j] = float64(p.Deltas[k.name])
			} else {
				l.values[j] = math.NaN()
			}
		}
		out = append(out, l)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].side != out[b].side {
			return out[a].side < out[b].side
		}
		return out[a].name < out[b].name
	})
	return out
}

// saveStacked draws figs one above the other, their data areas aligned
// (plot.Align), each with its legend right of it, to path.
func saveStacked(path string, figs ...*figure) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	legW := vg.Length(0)
	for _, f := range figs {
		if err := f.draw(); err != nil {
			return err
		}
		legW = max(legW, f.legendWidth())
	}
	w, h := plotWidth, plotHeight*3/2
	c := newCanvas(format, w, h)
	dc := draw.Crop(draw.New(c), plotMargin, -plotMargin, plotMargin, -plotMargin)
	plotArea := draw.Crop(dc, 0, -legW, 0, 0)
	rows := make([][]*plot.Plot, len(figs))
	for i, f := range figs {
		f.p.Title.Text = wrapText(f.p.Title.Text, f.p.Title.TextStyle.Font.Size, w-2*plotMargin-legW)
		rows[i] = []*plot.Plot{f.p}
	}
	tiles := plot.Align(rows, draw.Tiles{Rows: len(figs), Cols: 1, PadY: vg.Points(14)}, plotArea)
	for i, f := range figs {
		area := tiles[i][0]
		f.p.Draw(area)
		legArea := area
		legArea.Min.X = plotArea.Max.X + vg.Points(12)
		legArea.Max.X = dc.Max.X
		legArea.Max.Y = f.p.DataCanvas(area).Max.Y
		f.leg.Draw(legArea)
	}
	return writeImage(path, c)
}
