package plot

import (
	"fmt"

	"gonum.org/v1/plot/plotter"

	"github.com/rdmabench/rdmabench/bench/result"
)

// KindCliffs draws a cliffs document ('rdmabench cliffs --json').
const KindCliffs = "cliffs"

// Cliffs draws doc's figure along its axis (log2 scale): the median of
// each point's runs with a glyph, the runs' min and max dashed in the same
// color, and each knee as a segment between its two points in a second
// color, its drop in the legend and the title.
func Cliffs(doc *result.CliffsDocument, path string) error {
	if len(doc.Points) == 0 {
		return fmt.Errorf("%w: the cliffs document has no points", ErrNothingToPlot)
	}
	f := newFigure()
	var med, lo, hi plotter.XYs
	var xs, ys []float64
	for _, p := range doc.Points {
		x := float64(p.Value)
		med = append(med, plotter.XY{X: x, Y: p.Median})
		lo, hi = append(lo, plotter.XY{X: x, Y: p.Min}), append(hi, plotter.XY{X: x, Y: p.Max})
		xs, ys = append(xs, x), append(ys, p.Min, p.Max)
	}
	f.addLine(med, fmt.Sprintf("median of %d runs", doc.Runs), 0, 0, 0, true)
	if doc.Runs > 1 {
		f.addLine(lo, "min", 0, 0, 2, false)
		f.addLine(hi, "max", 0, 0, 1, false)
	}
	sign := "-"
	if doc.LowerIsBetter {
		sign = "+"
	}
	title := fmt.Sprintf("%s: %s along %s", doc.Test, doc.Figure, doc.Axis)
	for i, k := range doc.Knees {
		seg := plotter.XYs{{X: float64(k.Before), Y: k.FigureBefore}, {X: float64(k.After), Y: k.FigureAfter}}
		f.addLine(seg, fmt.Sprintf("knee %s%.0f%% (%d..%d)", sign, k.Drop*100, k.Before, k.After), 1+i, 1, 0, true)
	}
	switch {
	case len(doc.Knees) == 1:
		k := doc.Knees[0]
		title += fmt.Sprintf(" (knee %s%.0f%% between %d and %d)", sign, k.Drop*100, k.Before, k.After)
	case len(doc.Knees) > 1:
		title += fmt.Sprintf(" (%d knees)", len(doc.Knees))
	case doc.NoKneeUpTo != nil:
		title += fmt.Sprintf(" (no knee up to %d)", *doc.NoKneeUpTo)
	}
	p := f.p
	p.Title.Text = title
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", doc.Figure, doc.FigureUnit)
	f.sizeAxis(xs)
	p.X.Label.Text = doc.Axis + " (log2 scale)"
	f.valueAxis(&p.Y, &f.yt, ys, !doc.LowerIsBetter, false)
	return f.save(path)
}
