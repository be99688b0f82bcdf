package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// KindHeatmap is the N×N picture of a mesh document (Heatmap).
const KindHeatmap = "heatmap"

// meshGrid is the N×N figure of one test: rows the client, columns the
// server; NaN where no pair was measured (or it failed).
type meshGrid struct {
	z []float64
	n int
}

func (g meshGrid) Dims() (c, r int)        { return g.n, g.n }
func (g meshGrid) Z(c, r int) float64      { return g.z[r*g.n+c] }
func (g meshGrid) X(c int) float64         { return float64(c) }
func (g meshGrid) Y(r int) float64         { return float64(r) }
func (g meshGrid) set(r, c int, v float64) { g.z[r*g.n+c] = v }

// HeatmapTest picks the test of a heatmap: the first of doc's tests that
// sel matches (ops, modes, sizes; lat before bw when modes is empty).
func HeatmapTest(doc *result.MeshDocument, sel Selection) (result.Key, error) {
	keys := report.MeshTests(doc)
	match := func(k result.Key, mode string) bool {
		return (len(sel.Ops) == 0 || contains(sel.Ops, k.Op)) && (mode == "" || k.Mode == mode) &&
			(len(sel.Modes) == 0 || contains(sel.Modes, k.Mode)) && (len(sel.Sizes) == 0 || containsInt(sel.Sizes, k.SizeBytes))
	}
	for _, mode := range []string{result.ModeLat, ""} {
		for _, k := range keys {
			if match(k, mode) {
				return k, nil
			}
		}
	}
	return result.Key{}, fmt.Errorf("%w: no test of the mesh matches the selection", ErrNothingToPlot)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// MaxHeatmapRanks is the most ranks Heatmap draws: its cells grow as the
// square of them.
const MaxHeatmapRanks = 256

// Heatmap draws the mesh's N×N map of one test to path (.svg or .png): the
// latency statistic sel.Metric (default p99) for a latency test, bandwidth
// (MB/s) for a bandwidth test. Rows are clients, columns servers, both
// axes named by host and rank; each cell carries its value, and "FAIL" marks
// a failed pair. Unmeasured cells stay blank.
func Heatmap(doc *result.MeshDocument, sel Selection, path string) error {
	if _, err := Format(path); err != nil {
		return err
	}
	n := len(doc.Ranks)
	if n < 2 {
		return errors.New("heatmap: the mesh has fewer than 2 ranks")
	}
	if n > MaxHeatmapRanks { // n² cells, each labelled: bounded whatever the document
		return fmt.Errorf("heatmap: %d ranks, more than the %d a heatmap draws legibly; compare the document instead", n, MaxHeatmapRanks)
	}
	key, err := HeatmapTest(doc, sel)
	if err != nil {
		return err
	}
	metric := sel.Metric
	if metric == "" {
		metric = "p99"
	}
	g := meshGrid{z: make([]float64, n*n), n: n}
	for i := range g.z {
		g.z[i] = math.NaN()
	}
	var labels plotter.XYLabels
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range doc.Pairs {
		p := &doc.Pairs[i]
		if p.Client >= n || p.Server >= n {
			continue
		}
		r := report.MeshResult(p, key)
		if p.Status != result.StatusOK || r == nil {
			if p.Status != result.StatusOK {
				labels.XYs = append(labels.XYs, plotter.XY{X: float64(p.Server), Y: float64(p.Client)})
				labels.Labels = append(labels.Labels, "FAIL")
			}
			continue
		}
		v, ok := cellValue(r, key.Mode, metric)
		if !ok {
			continue
		}
		g.set(p.Client, p.Server, v)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(p.Server), Y: float64(p.Client)})
		labels.Labels = append(labels.Labels, strconv.FormatFloat(v, 'f', 1, 64))
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("%w: no pair of %s has a %s value", ErrNothingToPlot, key, metric)
	}
	if lo == hi {
		lo, hi = lo*0.99, hi*1.01+1e-9
	}
	p := plot.New()
	unit := metric + " latency, us"
	if key.Mode == result.ModeBW {
		unit = "bandwidth, MB/s"
	}
	p.Title.Text = fmt.Sprintf("%s: %s (row: client, column: server)", key, unit)
	p.X.Label.Text = "server"
	p.Y.Label.Text = "client"
	var pal palette.Palette = moreland.SmoothBlueRed().Palette(64)
	if key.Mode == result.ModeBW { // red stays "worse": low bandwidth
		pal = reversed(pal)
	}
	hm := plotter.NewHeatMap(g, pal)
	hm.Min, hm.Max = lo, hi
	hm.NaN = color.RGBA{R: 235, G: 235, B: 235, A: 255}
	p.Add(hm)
	if len(labels.XYs) <= 400 { // values in the cells while they stay legible
		lab, err := plotter.NewLabels(labels)
		if err != nil {
			return err
		}
		for i := range lab.TextStyle {
			lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = -0.5, -0.5
		}
		p.Add(lab)
	}
	var ticks []plot.Tick
	for i := range n {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: report.RankLabel(doc, i)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5, -0.5, float64(n)-0.5
	p.Y.Scale = flipped{}
	side := vg.Length(max(4, min(12, n))) * vg.Inch * 0.75
	w := side + 2*vg.Inch
	p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle.Font.Size, w-2*p.Title.Padding)
	return p.Save(w, side+vg.Inch, path)
}

// cellValue is a heatmap cell: latency in µs or bandwidth in MB/s.
func cellValue(r *result.Result, mode, metric string) (float64, bool) {
	if mode == result.ModeBW {
		return r.Bandwidth.MBPerSec, true
	}
	ns, ok := latencyMetric(r.Latency, metric)
	return ns / 1000, ok
}

func reversed(p palette.Palette) palette.Palette {
	cs := p.Colors()
	out := make([]color.Color, len(cs))
	for i, c := range cs {
		out[len(cs)-1-i] = c
	}
	return palette.Palette(plainPalette(out))
}

type plainPalette []color.Color

func (p plainPalette) Colors() []color.Color { return p }

// flipped puts rank 0 at the top, as in the text matrix.
type flipped struct{}

func (flipped) Normalize(min, max, x float64) float64 { return (max - x) / (max - min) }
