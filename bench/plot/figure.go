package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

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

// clampExp bounds a power of two of the size axis to -1..62 (NaN: 0).
func clampExp(e float64) float64 {
	if math.IsNaN(e) {
		return 0
	}
	return math.Max(-1, math.Min(62, e))
}

// sizeAxis makes the x axis a log2 scale of message sizes. It labels the
// sizes when there are at most 10 of them, else every power of two or every
// few, with a tick at every power of two.
func (f *figure) sizeAxis(sizes []float64) {
	lo, hi := slices.Min(sizes), slices.Max(sizes)
	f.xt = math.Log2
	a := &f.p.X
	e0, e1 := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	// checked sizes are 1 B .. 1 GiB (result.MaxSizeBytes); the axis holds
	// 2^-1 .. 2^62 whatever it is given, so that its ticks stay few
	e0, e1 = clampExp(e0), clampExp(e1)
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
	legW, legH := f.legendWidth(), f.leg.Rectangle(draw.Canvas{}).Size().Y
	w, h := plotWidth, max(plotHeight, legH+2*vg.Inch)
	f.p.Title.Text = wrapText(f.p.Title.Text, f.p.Title.TextStyle.Font.Size, w-2*plotMargin-legW)
	c := newCanvas(format, w, h)
	dc := draw.Crop(draw.New(c), plotMargin, -plotMargin, plotMargin, -plotMargin)
	plotArea := draw.Crop(dc, 0, -legW, 0, 0)
	data := f.p.DataCanvas(plotArea)
	f.p.Draw(plotArea)
	legArea := dc
	legArea.Min.X = plotArea.Max.X + vg.Points(12)
	legArea.Max.Y = data.Max.Y
	f.leg.Draw(legArea)
	return writeImage(path, c)
}

// legendWidth is the width of f's legend column with its gap (after draw).
func (f *figure) legendWidth() vg.Length {
	names := f.leg.Rectangle(draw.Canvas{}).Size().X
	for _, fl := range f.lines { // room for the names in a wider font than the one measured
		names = max(names, f.leg.ThumbnailWidth+f.leg.Padding*2+styleWidth(f.leg.TextStyle, fl.name))
	}
	return names + vg.Points(12)
}

// canvas is an image being drawn: SVG or PNG.
type canvas interface {
	vg.CanvasSizer
	io.WriterTo
}

// newCanvas returns a canvas of format ("svg" or "png") w wide and h high.
func newCanvas(format string, w, h vg.Length) canvas {
	if format == "svg" {
		return vgsvg.New(w, h)
	}
	return vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
}

// writeImage writes c to path.
func writeImage(path string, c io.WriterTo) error {
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
