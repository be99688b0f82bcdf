package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot kinds, the values of Plot's kind argument.
const (
	KindAuto        = "auto"         // Kinds decides
	KindPercentile  = "percentile"   // latency against percentile, HdrHistogram style
	KindCDF         = "cdf"          // cumulative fraction against latency
	KindSizeLatency = "size-latency" // a latency percentile against message size
	KindSizeBW      = "size-bw"      // bandwidth against message size
)

// KindNames lists the plot kinds in the order Plot writes them.
var KindNames = []string{KindAuto, KindPercentile, KindCDF, KindSizeLatency, KindSizeBW}

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
	for i, t := range tests {
		xys, n, err := percentilePoints(t.r)
		if err != nil {
			return fmt.Errorf("plot %s: %w", t.name(), err)
		}
		maxN = max(maxN, float64(n))
		for _, p := range xys {
			ys = append(ys, p.Y)
		}
		f.addLine(xys, t.name(), tests.testIndex(i), t.run, -1, false)
	}
	p := f.p
	p.Title.Text = latencyTitle(tests, "percentile distribution")
	p.X.Label.Text = "percentile (log scale of 1/(1-percentile))"
	p.Y.Label.Text = "latency (µs)"
	f.xt = math.Log10
	p.X.Min, p.X.Max = 0, math.Ceil(math.Log10(maxN)-1e-9)
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
// points (1/(1-q), latency in µs), the maximum at 1/(1-q) = N, and N, the
// number of samples. Repeated points are dropped, so a test of one sample
// is one point. Latencies are divided by r.HistogramDivisor; 0 ns counts
// as 1 ns so that log scales can show it.
func percentilePoints(r *result.Result) (plotter.XYs, int64, error) {
	h, err := r.DecodeHistogram()
	if err != nil {
		return nil, 0, err
	}
	div := result.Divisor(r.HistogramDivisor)
	n := float64(h.Count())
	var xys plotter.XYs
	for _, p := range h.Distribution() {
		x := n
		if p.Percentile < 100 {
			x = min(1/(1-p.Percentile/100), n)
		}
		pt := plotter.XY{X: max(x, 1), Y: float64(max(p.NS, 1)) / div / 1000}
		if len(xys) == 0 || xys[len(xys)-1] != pt {
			xys = append(xys, pt)
		}
	}
	return xys, h.Count(), nil
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
		}
	}
	if len(ys) == 0 {
		return fmt.Errorf("plot: %w: every selected test has too few samples for %s (n/a)",
			ErrNothingToPlot, strings.Join(metrics, " or "))
	}
	p := f.p
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = metricName(m)
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

// plotTest is one result of one document.
type plotTest struct {
	run   int    // index of the document
	label string // the document's label
	doc   *result.Document
	r     *result.Result
}

func (t plotTest) name() string {
	return fmt.Sprintf("%s %s %s %dB", t.label, t.r.Op, t.r.Mode, t.r.SizeBytes)
}

type plotTests []plotTest

// testIndex returns the index of tests[i]'s op, mode and size among the
// distinct ones of ts, in order of appearance: runs of one test share it.
func (ts plotTests) testIndex(i int) int {
	key := func(t plotTest) string { return fmt.Sprintf("%s/%s/%d", t.r.Op, t.r.Mode, t.r.SizeBytes) }
	return slices.Index(distinct(ts, key), key(ts[i]))
}

// plotSeries is the results of one document, op and mode, by size.
type plotSeries struct {
	run      int
	label    string
	op, mode string
	color    int // index of op and mode among all series
	tests    []plotTest
}

func (s plotSeries) name() string {
	return fmt.Sprintf("%s %s %s", s.label, s.op, s.mode)
}

// series groups ts by document, op and mode, each sorted by size.
func (ts plotTests) series() []plotSeries {
	opMode := func(t plotTest) string { return t.r.Op + " " + t.r.Mode }
	keys := distinct(ts, opMode)
	var out []plotSeries
	for run := range ts.maxRun() + 1 {
		for ki, k := range keys {
			var s plotSeries
			for _, t := range ts {
				if t.run == run && opMode(t) == k {
					s.tests = append(s.tests, t)
				}
			}
			if len(s.tests) == 0 {
				continue
			}
			slices.SortStableFunc(s.tests, func(a, b plotTest) int { return a.r.SizeBytes - b.r.SizeBytes })
			t := s.tests[0]
			s.run, s.label, s.op, s.mode, s.color = run, t.label, t.r.Op, t.r.Mode, ki
			out = append(out, s)
		}
	}
	return out
}

func (ts plotTests) maxRun() int {
	m := 0
	for _, t := range ts {
		m = max(m, t.run)
	}
	return m
}

// selectTests returns the results of docs matching sel's ops, modes and
// sizes, in document then result order.
func selectTests(docs []*result.Document, labels []string, sel Selection) plotTests {
	var out plotTests
	for i, d := range docs {
		if d == nil {
			continue
		}
		label := strconv.Itoa(i + 1)
		if i < len(labels) {
			label = labels[i]
		}
		for j := range d.Results {
			r := &d.Results[j]
			if (len(sel.Ops) == 0 || slices.Contains(sel.Ops, r.Op)) &&
				(len(sel.Modes) == 0 || slices.Contains(sel.Modes, r.Mode)) &&
				(len(sel.Sizes) == 0 || slices.Contains(sel.Sizes, r.SizeBytes)) {
				out = append(out, plotTest{run: i, label: label, doc: d, r: r})
			}
		}
	}
	return out
}

// selectOrErr is selectTests, with an error naming what the documents hold
// when nothing matches.
func selectOrErr(docs []*result.Document, labels []string, sel Selection) (plotTests, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("plot: %w: no result files", ErrNothingToPlot)
	}
	tests := selectTests(docs, labels, sel)
	if len(tests) > 0 {
		return tests, nil
	}
	all := selectTests(docs, labels, Selection{})
	if len(all) == 0 {
		return nil, fmt.Errorf("plot: %w: the result files hold no results", ErrNothingToPlot)
	}
	var want []string
	if len(sel.Ops) > 0 {
		want = append(want, "op "+strings.Join(sel.Ops, ","))
	}
	if len(sel.Modes) > 0 {
		want = append(want, "mode "+strings.Join(sel.Modes, ","))
	}
	if len(sel.Sizes) > 0 {
		want = append(want, "size "+joinInts(sel.Sizes))
	}
	ops := distinct(all, func(t plotTest) string { return t.r.Op })
	modes := distinct(all, func(t plotTest) string { return t.r.Mode })
	sizes := distinct(all, func(t plotTest) int { return t.r.SizeBytes })
	slices.Sort(sizes)
	return nil, fmt.Errorf("plot: %w: no result has %s; the files hold op %s, mode %s, size %s",
		ErrNothingToPlot, strings.Join(want, " and "), strings.Join(ops, ","), strings.Join(modes, ","), joinInts(sizes))
}

// histTests selects the tests of a percentile or CDF plot: with no modes in
// sel, the latency-mode ones if any; with no sizes, the smallest size. Tests
// without a histogram or samples are left out.
func histTests(docs []*result.Document, labels []string, sel Selection) (plotTests, error) {
	tests, err := selectOrErr(docs, labels, sel)
	if err != nil {
		return nil, err
	}
	tests = preferMode(tests, sel, result.ModeLat)
	if len(sel.Sizes) == 0 {
		sizes := distinct(tests, func(t plotTest) int { return t.r.SizeBytes })
		smallest := slices.Min(sizes)
		tests = slices.DeleteFunc(tests, func(t plotTest) bool { return t.r.SizeBytes != smallest })
	}
	kept := slices.DeleteFunc(slices.Clone(tests), func(t plotTest) bool { return t.r.Histogram == "" || t.r.Samples == 0 })
	if len(kept) == 0 {
		return nil, fmt.Errorf("plot: %w: no selected test has a latency histogram (%s)", ErrNothingToPlot, tests[0].name())
	}
	return kept, nil
}

// preferMode keeps the tests of mode when sel names no mode and some test
// has it.
func preferMode(tests plotTests, sel Selection, mode string) plotTests {
	if len(sel.Modes) > 0 || !slices.ContainsFunc(tests, func(t plotTest) bool { return t.r.Mode == mode }) {
		return tests
	}
	return slices.DeleteFunc(tests, func(t plotTest) bool { return t.r.Mode != mode })
}

func distinct[T comparable](ts plotTests, key func(plotTest) T) []T {
	var out []T
	for _, t := range ts {
		if k := key(t); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

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

// --- titles ------------------------------------------------------------------------

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

// --- drawing -----------------------------------------------------------------------

const (
	plotWidth  = 10 * vg.Inch
	plotHeight = 6 * vg.Inch
	plotMargin = 10 // points around the figure
)

// Tableau 10: distinguishable, and readable on white.
var plotColors = []color.Color{
	rgb(0x1f77b4), rgb(0xff7f0e), rgb(0x2ca02c), rgb(0xd62728), rgb(0x9467bd),
	rgb(0x8c564b), rgb(0xe377c2), rgb(0x7f7f7f), rgb(0xbcbd22), rgb(0x17becf),
}

var plotDashes = [][]vg.Length{
	nil,
	{vg.Points(7), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)},
	{vg.Points(12), vg.Points(4)},
}

var plotGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{},
	draw.CrossGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{},
}

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// figure is a plot with its legend drawn to the right of it. Log axes are
// drawn as linear axes of the logarithms of the data (xt, yt), with ticks
// labelled in data units: gonum's LogScale misplaces the axis labels' glyph
// boxes, which squeezes the data area.
type figure struct {
	p      *plot.Plot
	leg    plot.Legend
	lines  []figLine
	xt, yt func(float64) float64 // data to axis coordinates; nil: identity
}

type figLine struct {
	xys              plotter.XYs
	name             string
	color, run, dash int
	glyphs           bool
}

func newFigure() *figure {
	p := plot.New()
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(11)
	p.Y.Tick.Label.Font.Size = vg.Points(11)
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	grid.Vertical.Width = vg.Points(0.5)
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(11)
	leg.ThumbnailWidth = vg.Points(34)
	leg.Padding = vg.Points(2)
	return &figure{p: p, leg: leg}
}

// addLine adds a line through xys (data units) named name, colored by
// colorIdx, dashed by dash (-1: by run), with the glyph of run at the points
// if glyphs is set or all points have one x (such as a one-sample test).
func (f *figure) addLine(xys plotter.XYs, name string, colorIdx, run, dash int, glyphs bool) {
	if dash < 0 {
		dash = run
	}
	point := !slices.ContainsFunc(xys, func(p plotter.XY) bool { return p.X != xys[0].X })
	f.lines = append(f.lines, figLine{xys: xys, name: name, color: colorIdx, run: run, dash: dash, glyphs: glyphs || point})
}

// draw adds the lines to the plot and the legend, in axis coordinates.
func (f *figure) draw() error {
	tr := func(t func(float64) float64, v float64) float64 {
		if t == nil {
			return v
		}
		return t(v)
	}
	for _, fl := range f.lines {
		xys := make(plotter.XYs, len(fl.xys))
		for i, p := range fl.xys {
			xys[i] = plotter.XY{X: tr(f.xt, p.X), Y: tr(f.yt, p.Y)}
		}
		c := plotColors[fl.color%len(plotColors)]
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("plot %s: %w", fl.name, err)
		}
		l.Color = c
		l.Width = vg.Points(1.6)
		l.Dashes = plotDashes[fl.dash%len(plotDashes)]
		thumbs := []plot.Thumbnailer{l}
		f.p.Add(l)
		if fl.glyphs {
			s, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("plot %s: %w", fl.name, err)
			}
			s.Color = c
			s.Shape = plotGlyphs[fl.run%len(plotGlyphs)]
			s.Radius = vg.Points(3)
			f.p.Add(s)
			thumbs = append(thumbs, s)
		}
		f.leg.Add(fl.name, thumbs...)
	}
	return nil
}

// valueAxis sets axis a, whose transform is *t, for the data values vs: a
// log10 scale when log is set or the positive values span more than a factor
// of 50, else linear, from 0 if fromZero or the values span more than a
// factor of 3.
func (f *figure) valueAxis(a *plot.Axis, t *func(float64) float64, vs []float64, fromZero, log bool) {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vs {
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi == 0 {
		return
	}
	if log || hi/lo > 50 {
		*t = math.Log10
		a.Tick.Marker = logTicks{}
		a.Min, a.Max = math.Log10(niceFloor(lo)), math.Log10(niceCeil(hi))
		if !strings.Contains(a.Label.Text, "log") {
			a.Label.Text = strings.TrimSuffix(a.Label.Text, ")") + ", log scale)"
		}
		return
	}
	if fromZero || hi/lo > 3 {
		a.Min = 0
	}
}

// sizeAxis makes the x axis a log2 scale of message sizes. It labels the
// sizes when there are at most 10 of them, else every power of two or every
// few, with a tick at every power of two.
func (f *figure) sizeAxis(sizes []float64) {
	lo, hi := slices.Min(sizes), slices.Max(sizes)
	f.xt = math.Log2
	a := &f.p.X
	e0, e1 := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	if e0 == e1 {
		e0, e1 = e0-1, e1+1
	}
	a.Min, a.Max = e0, e1
	var labelled []float64
	slices.Sort(sizes)
	if sizes = slices.Compact(sizes); len(sizes) <= 10 {
		labelled = sizes
	}
	step := int(math.Ceil((e1 - e0 + 1) / 12))
	var ticks []plot.Tick
	for e := int(e0); e <= int(e1); e++ {
		t := plot.Tick{Value: float64(e)}
		if labelled == nil && (e-int(e0))%step == 0 {
			t.Label = report.SizeLabel(int64(math.Exp2(float64(e))))
		}
		ticks = append(ticks, t)
	}
	for _, v := range labelled {
		ticks = append(ticks, plot.Tick{Value: math.Log2(v), Label: report.SizeLabel(int64(v))})
	}
	a.Tick.Marker = plot.ConstantTicks(ticks)
}

// save draws f to path, in the format of its extension, with the legend in a
// column right of the plot; the figure grows taller when the legend needs it.
func (f *figure) save(path string) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	if err := f.draw(); err != nil {
		return err
	}
	legRect := f.leg.Rectangle(draw.Canvas{})
	legW, legH := legRect.Size().X+vg.Points(12), legRect.Size().Y
	w, h := plotWidth, max(plotHeight, legH+2*vg.Inch)
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(w, h)
	default:
		c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	}
	dc := draw.Crop(draw.New(c), plotMargin, -plotMargin, plotMargin, -plotMargin)
	plotArea := draw.Crop(dc, 0, -legW, 0, 0)
	data := f.p.DataCanvas(plotArea)
	f.p.Draw(plotArea)
	legArea := dc
	legArea.Min.X = plotArea.Max.X + vg.Points(12)
	legArea.Max.Y = data.Max.Y
	f.leg.Draw(legArea)

	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = c.WriteTo(file)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("plot: write %s: %w", path, err)
	}
	return nil
}

// percentileTicks labels an axis of log10(1/(1-q)) with percentiles: 0 is
// 0 %, 1 is 90 %, 2 is 99 %, and so on, with minor ticks between.
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := 0; float64(e) <= hi+1e-9; e++ {
		label := "0%"
		if e > 0 {
			label = strconv.FormatFloat(100-100/math.Pow10(e), 'f', max(e-2, 0), 64) + "%"
		}
		ticks = append(ticks, plot.Tick{Value: float64(e), Label: label})
		for m := 2; m < 10; m++ {
			if v := float64(e) + math.Log10(float64(m)); v < hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// logTicks labels an axis of log10(v) with v at powers of ten, and at 2 and
// 5 times them when fewer than three powers of ten are in range, with minor
// ticks between.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	e0, e1 := math.Floor(lo+1e-9), math.Ceil(hi-1e-9)
	dense := math.Floor(hi+1e-9)-math.Ceil(lo-1e-9) < 2
	var ticks []plot.Tick
	for e := e0; e <= e1; e++ {
		for m := 1; m < 10; m++ {
			x := e + math.Log10(float64(m))
			if x < lo-1e-9 || x > hi+1e-9 {
				continue
			}
			t := plot.Tick{Value: x}
			if m == 1 || dense && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(roundSig(float64(m)*math.Pow(10, e)), 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks labels a linear axis every 1, 2 or 5 times a power of ten, 4
// to 10 labels in all, with minor ticks between.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(roundSig(lo), 'f', -1, 64)}}
	}
	step := niceCeil((hi - lo) / 8)
	mant := math.Round(step / math.Pow(10, math.Floor(math.Log10(step))))
	minor := step / 5
	if mant == 2 {
		minor = step / 4
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi+minor*1e-9; i++ {
		v := i * minor
		if math.Abs(v) < minor*1e-6 {
			v = 0 // not -0
		}
		t := plot.Tick{Value: v}
		if r := math.Mod(math.Abs(v)/step+1e-9, 1); r < 2e-9 {
			t.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func fractionTicks() []plot.Tick {
	var ticks []plot.Tick
	for i := 0; i <= 20; i++ {
		t := plot.Tick{Value: float64(i) / 20}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// roundSig rounds v to 6 significant digits, hiding float noise in 10^e.
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// niceFloor returns the largest 1, 2 or 5 times a power of ten at or below v.
func niceFloor(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*d <= v*(1+1e-9) {
			return roundSig(m * d)
		}
	}
	return d
}

// niceCeil returns the smallest 1, 2 or 5 times a power of ten at or above v.
func niceCeil(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*d >= v*(1-1e-9) {
			return roundSig(m * d)
		}
	}
	return 10 * d
}
