package plot

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Plot kinds, the values of Draw's kind argument.
const (
	KindAuto        = "auto"         // Kinds decides
	KindPercentile  = "percentile"   // latency against percentile, HdrHistogram style
	KindCDF         = "cdf"          // cumulative fraction against latency
	KindSizeLatency = "size-latency" // a latency percentile against message size
	KindSizeBW      = "size-bw"      // bandwidth against message size
)

// KindNames lists the plot kinds in the order Draw writes them.
var KindNames = []string{KindAuto, KindPercentile, KindCDF, KindSizeLatency, KindSizeBW, KindLoad, KindTimeline}

// Metrics lists the latency statistics a size-latency plot can show
// (Selection.Metric), named as in the JSON latency_ns object.
var Metrics = []string{"min", "mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"}

// ErrNothingToPlot is wrapped by the errors returned when the selection
// matches no result, or no matching result holds a value to plot.
var ErrNothingToPlot = errors.New("nothing to plot")

// Selection picks the results to plot. Empty fields select everything,
// except as each plot function documents.
type Selection struct {
	Ops   []string // e.g. "send"
	Modes []string // "lat", "bw"
	Sizes []int    // message sizes, bytes
	// Metric is the latency statistic of size-latency plots (one of
	// Metrics); "" plots p50 and p99.
	Metric string
	// Counters are the port counters a timeline plot draws, by their
	// names in the JSON's deltas; empty: the trouble counters that moved.
	Counters []string
}

// Format returns the image format for path from its extension, "svg" or
// "png" (in any letter case), or an error naming the extension.
func Format(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".svg", ".png":
		return ext[1:], nil
	case "":
		return "", fmt.Errorf("plot output %q has no extension: use .svg or .png", path)
	}
	return "", fmt.Errorf("plot output %q: format %q unknown; use .svg or .png", path, filepath.Ext(path))
}

// Labels returns the legend label of each result file in paths: its base
// name without the extension ("runs/a.json" is "a"), or, when two files would
// share a label, the path without the extension. "-" is "stdin".
func Labels(paths []string) []string {
	short := func(p string) string {
		if p == "-" {
			return "stdin"
		}
		return strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	}
	out := make([]string, len(paths))
	n := map[string]int{}
	for i, p := range paths {
		out[i] = short(p)
		n[out[i]]++
	}
	for i, p := range paths {
		if n[out[i]] > 1 && p != "-" {
			out[i] = strings.TrimSuffix(p, filepath.Ext(p))
		}
	}
	return out
}

// Kinds returns the plot kinds that --kind auto draws for docs under sel:
// KindPercentile when there are several documents or the selected results
// have one message size; for a size sweep (several sizes), KindSizeLatency
// when it holds latency-mode results or sel names modes, and KindSizeBW when
// it holds bandwidth-mode results. It returns nil when sel matches nothing.
func Kinds(docs []*result.Document, sel Selection) []string {
	tests := selectTests(docs, nil, sel)
	if len(tests) == 0 {
		return nil
	}
	sizes := distinct(tests, func(t plotTest) int { return t.r.SizeBytes })
	modes := distinct(tests, func(t plotTest) string { return t.r.Mode })
	var kinds []string
	if len(docs) > 1 || len(sizes) == 1 {
		kinds = append(kinds, KindPercentile)
	}
	if len(sizes) > 1 {
		if slices.Contains(modes, result.ModeLat) || len(sel.Modes) > 0 {
			kinds = append(kinds, KindSizeLatency)
		}
		if slices.Contains(modes, result.ModeBW) {
			kinds = append(kinds, KindSizeBW)
		}
	}
	if slices.ContainsFunc(docs, func(d *result.Document) bool { return len(d.LoadSweeps) > 0 }) {
		kinds = append(kinds, KindLoad)
	}
	return kinds
}

// Draw draws the plots of kind (one of KindNames) of the results in docs,
// whose legend labels are labels, selected by sel, to path, an .svg or .png
// file. With KindAuto it draws the kinds Kinds returns; when there are
// several, each goes to path with "-KIND" inserted before the extension
// (x.svg becomes x-percentile.svg, x-size-latency.svg, ...). It returns the
// files written.
func Draw(docs []*result.Document, labels []string, kind string, sel Selection, path string) ([]string, error) {
	if _, err := Format(path); err != nil {
		return nil, err
	}
	kinds := []string{kind}
	if kind == KindAuto {
		if kinds = Kinds(docs, sel); len(kinds) == 0 {
			_, err := selectOrErr(docs, labels, sel)
			return nil, err
		}
	}
	var written []string
	for _, k := range kinds {
		out := path
		if len(kinds) > 1 {
			ext := filepath.Ext(path)
			out = strings.TrimSuffix(path, ext) + "-" + k + ext
		}
		var err error
		switch k {
		case KindPercentile:
			err = Percentiles(docs, labels, sel, out)
		case KindCDF:
			err = CDFs(docs, labels, sel, out)
		case KindSizeLatency:
			err = SizeLatencies(docs, labels, sel, out)
		case KindSizeBW:
			err = SizeBandwidth(docs, labels, sel, out)
		case KindLoad:
			if _, err = selectOrErr(docs, labels, sel); err == nil {
				err = LoadSweeps(docs, labels, out)
			}
		case KindTimeline:
			err = Timeline(docs, labels, sel, out)
		default:
			return written, fmt.Errorf("plot kind %q unknown; valid: %s", k, strings.Join(KindNames, ", "))
		}
		if err != nil {
			return written, err
		}
		written = append(written, out)
	}
	return written, nil
}

// Percentiles draws the latency percentile distribution of each selected
// test, as HdrHistogram's plotter does: latency in µs against the percentile
// on a log scale of 1/(1-q), which spreads out the tail (0 %, 90 %, 99 %,
// 99.9 % ... are equally spaced). There is one line per document and test, so
// the runs of one test overlay. The last point of a line is the maximum,
// drawn at percentile 1-1/N for N samples. With no modes in sel, only
// latency-mode results are drawn if there are any; with no sizes, only the
// smallest size. Latencies are those of latency_ns (histogram / divisor).
func Percentiles(docs []*result.Document, labels []string, sel Selection, path string) error {
	tests, err := histTests(docs, labels, sel)
	if err != nil {
		return err
	}
	f := newFigure()
	maxN := 100.0
	var ys []float64
	cut := false
	for i, t := range tests {
		xys, all, err := percentilePoints(t.r)
		if err != nil {
			return fmt.Errorf("plot %s: %w", t.name(), err)
		}
		cut = cut || !all
		for _, p := range xys {
			maxN = max(maxN, p.X)
		}
		for _, p := range xys {
			ys = append(ys, p.Y)
		}
		f.addLine(xys, t.name(), tests.testIndex(i), t.run, -1, false)
	}
	p := f.p
	p.Title.Text = latencyTitle(tests, "percentile distribution")
	p.X.Label.Text = "percentile (log scale of 1/(1-percentile))"
	if cut { // the tables call these n/a: the plot says so rather than draw them
		p.X.Label.Text += "; the tail past what the samples back (n/a in the tables) is not drawn"
	}
	p.Y.Label.Text = "latency (µs)"
	f.xt = math.Log10
	p.X.Min, p.X.Max = 0, math.Log10(maxN) // the last backed point, not a decade past it
	p.X.Tick.Marker = percentileTicks{}
	f.valueAxis(&p.Y, &f.yt, ys, true, false)
	return f.save(path)
}

// CDFs draws the cumulative distribution of the latency of each selected
// test: the fraction of samples at or below a latency, against the latency
// in µs on a log scale. There is one line per document and test. The
// selection defaults are those of Percentiles.
func CDFs(docs []*result.Document, labels []string, sel Selection, path string) error {
	tests, err := histTests(docs, labels, sel)
	if err != nil {
		return err
	}
	f := newFigure()
	var xs []float64
	for i, t := range tests {
		xys, err := cdfPoints(t.r)
		if err != nil {
			return fmt.Errorf("plot %s: %w", t.name(), err)
		}
		xs = append(xs, xys[0].X, xys[len(xys)-1].X)
		f.addLine(xys, t.name(), tests.testIndex(i), t.run, -1, false)
	}
	p := f.p
	p.Title.Text = latencyTitle(tests, "cumulative distribution")
	p.X.Label.Text = "latency (µs, log scale)"
	p.Y.Label.Text = "cumulative fraction of samples"
	f.valueAxis(&p.X, &f.xt, xs, true, true)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.ConstantTicks(fractionTicks())
	return f.save(path)
}

// percentilePoints returns the percentile distribution of r's histogram as
// points (1/(1-q), latency in µs), as far as the samples back the
// percentile (the n/a rule of the tables, at the result's confidence):
// no point lies past what the tables can state, and the maximum is drawn
// only where its percentile 1-1/N would be backed, which it never is. all
// is false when points were left out. Repeated points are dropped, so a
// test of one sample is one point. Latencies are divided by
// r.HistogramDivisor; 0 ns counts as 1 ns so that log scales can show it.
func percentilePoints(r *result.Result) (xys plotter.XYs, all bool, err error) {
	h, err := r.DecodeHistogram()
	if err != nil {
		return nil, false, err
	}
	div := result.Divisor(r.HistogramDivisor)
	conf := r.Latency.Confidence
	if !(conf > 0 && conf < 1) {
		conf = hist.DefaultConfidence
	}
	n := h.Count()
	all = true
	for _, p := range h.Distribution() {
		if p.Percentile > 0 && (p.Percentile >= 100 || hist.MinSamples(p.Percentile, conf) > n) {
			all = false
			continue
		}
		x := 1.0
		if p.Percentile > 0 {
			x = min(1/(1-p.Percentile/100), float64(n))
		}
		pt := plotter.XY{X: max(x, 1), Y: float64(max(p.NS, 1)) / div / 1000}
		if len(xys) == 0 || xys[len(xys)-1] != pt {
			xys = append(xys, pt)
		}
	}
	return xys, all, nil
}

// cdfPoints returns the cumulative distribution of r's histogram as points
// (latency in µs, fraction of samples at or below it), starting at (min, 0).
// Latencies are divided by r.HistogramDivisor; 0 ns counts as 1 ns.
func cdfPoints(r *result.Result) (plotter.XYs, error) {
	h, err := r.DecodeHistogram()
	if err != nil {
		return nil, err
	}
	div := result.Divisor(r.HistogramDivisor)
	n := float64(h.Count())
	us := func(ns int64) float64 { return float64(max(ns, 1)) / div / 1000 }
	xys := plotter.XYs{{X: us(h.Min()), Y: 0}}
	var cum int64
	for _, b := range h.Buckets() {
		cum += b.Count
		xys = append(xys, plotter.XY{X: us(b.High), Y: float64(cum) / n})
	}
	return xys, nil
}

// SizeLatencies draws a latency statistic against the message size (log2
// scale): sel.Metric, or p50 and p99 when it is "", in µs, one line per
// document, op and mode. Tests whose statistic is n/a (too few samples) are
// left out of their line. With no modes in sel, only latency-mode results are
// drawn if there are any.
func SizeLatencies(docs []*result.Document, labels []string, sel Selection, path string) error {
	metrics := []string{"p50", "p99"}
	if sel.Metric != "" {
		if !slices.Contains(Metrics, sel.Metric) {
			return fmt.Errorf("plot metric %q unknown; valid: %s", sel.Metric, strings.Join(Metrics, ", "))
		}
		metrics = []string{sel.Metric}
	}
	tests, err := selectOrErr(docs, labels, sel)
	if err != nil {
		return err
	}
	tests = preferMode(tests, sel, result.ModeLat)
	f := newFigure()
	var ys []float64
	var sizes []float64
	drawn := make([]bool, len(metrics))
	for mi, m := range metrics {
		for _, s := range tests.series() {
			var xys plotter.XYs
			for _, t := range s.tests {
				if v, ok := latencyMetric(t.r.Latency, m); ok {
					xys = append(xys, plotter.XY{X: float64(t.r.SizeBytes), Y: v / 1000})
					ys = append(ys, v/1000)
				}
				sizes = append(sizes, float64(t.r.SizeBytes))
			}
			if len(xys) == 0 {
				continue
			}
			dash := s.run
			if len(metrics) > 1 {
				dash = mi
			}
			f.addLine(xys, s.name()+" "+metricName(m), s.color, s.run, dash, true)
			drawn[mi] = true
		}
	}
	if len(ys) == 0 {
		return fmt.Errorf("plot: %w: every selected test has too few samples for %s (n/a)",
			ErrNothingToPlot, strings.Join(metrics, " or "))
	}
	p := f.p
	var names []string // the title and axis name only the metrics drawn
	for i, m := range metrics {
		if drawn[i] {
			names = append(names, metricName(m))
		}
	}
	p.Title.Text = latencyTitle(tests, strings.Join(names, " and ")+" against message size")
	p.X.Label.Text = "message size (bytes, log2 scale)"
	p.Y.Label.Text = strings.Join(names, ", ") + " latency (µs)"
	f.sizeAxis(sizes)
	f.valueAxis(&p.Y, &f.yt, ys, false, false)
	return f.save(path)
}

// SizeBandwidth draws the bandwidth in MiB/s (2^20 bytes/s) against the
// message size (log2 scale), one line per document, op and mode. With no
// modes in sel, only bandwidth-mode results are drawn if there are any.
func SizeBandwidth(docs []*result.Document, labels []string, sel Selection, path string) error {
	tests, err := selectOrErr(docs, labels, sel)
	if err != nil {
		return err
	}
	tests = preferMode(tests, sel, result.ModeBW)
	f := newFigure()
	var ys, sizes []float64
	for _, s := range tests.series() {
		var xys plotter.XYs
		for _, t := range s.tests {
			v := t.r.Bandwidth.MiBPerSec
			sizes = append(sizes, float64(t.r.SizeBytes))
			if v > 0 && !math.IsInf(v, 0) {
				xys = append(xys, plotter.XY{X: float64(t.r.SizeBytes), Y: v})
				ys = append(ys, v)
			}
		}
		if len(xys) > 0 {
			f.addLine(xys, s.name(), s.color, s.run, s.run, true)
		}
	}
	if len(ys) == 0 {
		return fmt.Errorf("plot: %w: no selected test has a bandwidth", ErrNothingToPlot)
	}
	p := f.p
	modes := distinct(tests, func(t plotTest) string { return t.r.Mode })
	p.Title.Text = titleWithSoftware(tests, fmt.Sprintf("%s bandwidth in %s mode against message size",
		opList(tests), strings.Join(modes, ", ")))
	p.X.Label.Text = "message size (bytes, log2 scale)"
	p.Y.Label.Text = "bandwidth (MiB/s, 2^20 bytes/s)"
	f.sizeAxis(sizes)
	f.valueAxis(&p.Y, &f.yt, ys, false, false)
	return f.save(path)
}

// --- selection -------------------------------------------------------------------

// --- titles ------------------------------------------------------------------------

// --- drawing -----------------------------------------------------------------------
