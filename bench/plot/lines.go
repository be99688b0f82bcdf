package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
)

// Line is one line of a SizeLines plot: values against message size, drawn
// in the palette's color Color, dash pattern Dash and point glyph Glyph
// (indexes, taken modulo the number of each).
type Line struct {
	Name  string
	Sizes []float64 // message sizes, bytes
	Ys    []float64 // one value per size
	Color int
	Dash  int
	Glyph int
}

// SizeLines draws lines against message size on a log2 size axis, with a
// glyph at every point, to path (.svg or .png). The value axis is labelled
// yLabel and is a log10 scale when logY is set (values <= 0 are left out),
// else as the data suggests (see the size plots). Lines without points are
// skipped; it is an error wrapping ErrNothingToPlot if none has one.
func SizeLines(title, yLabel string, lines []Line, logY bool, path string) error {
	return drawLines(title, "", yLabel, lines, logY, path)
}

// Lines is SizeLines on a linear x axis labelled xLabel: Line.Sizes hold
// the x values (any quantity, such as a loss rate in percent).
func Lines(title, xLabel, yLabel string, lines []Line, logY bool, path string) error {
	return drawLines(title, xLabel, yLabel, lines, logY, path)
}

// drawLines draws lines; xLabel "" means a log2 message size axis.
func drawLines(title, xLabel, yLabel string, lines []Line, logY bool, path string) error {
	if _, err := Format(path); err != nil {
		return err
	}
	f := newFigure()
	var ys, xs []float64
	for _, l := range lines {
		var xys plotter.XYs
		for i, x := range l.Sizes {
			if i >= len(l.Ys) || xLabel == "" && !(x > 0) {
				break
			}
			y := l.Ys[i]
			if math.IsNaN(y) || math.IsInf(y, 0) || logY && y <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: y})
			ys, xs = append(ys, y), append(xs, x)
		}
		if len(xys) > 0 {
			f.addLine(xys, l.Name, l.Color, l.Glyph, l.Dash, true)
		}
	}
	if len(ys) == 0 {
		return fmt.Errorf("plot: %w: no line has a value", ErrNothingToPlot)
	}
	p := f.p
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	if xLabel == "" {
		p.X.Label.Text = "message size (bytes, log2 scale)"
		f.sizeAxis(xs)
	} else {
		p.X.Label.Text = xLabel
	}
	f.valueAxis(&p.Y, &f.yt, ys, false, logY)
	return f.save(path)
}
