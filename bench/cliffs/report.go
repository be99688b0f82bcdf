package cliffs

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// WriteReport writes doc as text: the points (median, min and max of the
// runs), then each knee with its interval and counters, or "no knee up to
// N", then the warnings.
func WriteReport(w io.Writer, doc *result.CliffsDocument) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cliffs: %s along %s, figure %s (%s, %s), %d runs a point, knee at %.0f%% worse (%.0f%% interval)\n",
		doc.Test, doc.Axis, doc.Figure, doc.FigureUnit, better(doc.LowerIsBetter), doc.Runs, doc.MinDrop*100, doc.Confidence*100)
	rows := make([][]string, 0, len(doc.Points))
	for _, p := range doc.Points {
		rows = append(rows, []string{fmt.Sprint(p.Value), p.Stage, fig(p.Median), fig(p.Min), fig(p.Max),
			fmt.Sprint(len(p.Runs)), fmt.Sprint(p.Iterations)})
	}
	report.Table{{Head: doc.Axis}, {Head: "stage", Left: true}, {Head: "median"}, {Head: "min"}, {Head: "max"}, {Head: "runs"}, {Head: "iterations"}}.Write(&b, rows)
	for _, k := range doc.Knees {
		b.WriteString(KneeLine(doc, k) + "\n")
		for _, c := range k.Counters {
			tr := ""
			if c.Trouble != "" {
				tr = " (" + c.Trouble + ")"
			}
			fmt.Fprintf(&b, "  counter %s %s: %.4g -> %.4g per operation%s\n", c.Side, c.Name, c.PerOpBefore, c.PerOpAfter, tr)
		}
	}
	if doc.NoKneeUpTo != nil {
		fmt.Fprintf(&b, "no knee up to %s\n", axisLabel(doc.Axis, *doc.NoKneeUpTo))
	}
	if doc.EstimatedNS > 0 {
		fmt.Fprintf(&b, "time: %s (announced at most %s)\n", round(time.Duration(doc.ElapsedNS)), round(time.Duration(doc.EstimatedNS)))
	}
	for _, s := range doc.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// KneeLine says knee k in one line: "knee: mpps -47% between 256 and 512
// qps (95% interval -52% .. -41%), ladder step 256..512".
func KneeLine(doc *result.CliffsDocument, k result.CliffsKnee) string {
	sign := "-"
	if doc.LowerIsBetter {
		sign = "+"
	}
	ci := "interval n/a: 1 run a point"
	if k.DropCI != nil {
		lo, hi := k.DropCI.High, k.DropCI.Low // a fall: the figure's change runs from -high to -low
		if doc.LowerIsBetter {
			lo, hi = k.DropCI.Low, k.DropCI.High
		}
		ci = fmt.Sprintf("%.0f%% interval %s%.0f%% .. %s%.0f%%", doc.Confidence*100, sign, lo*100, sign, hi*100)
	}
	return fmt.Sprintf("knee: %s %s%.0f%% between %s and %s (%s -> %s %s; %s), ladder step %d..%d",
		doc.Figure, sign, k.Drop*100, axisLabel(doc.Axis, k.Before), axisLabel(doc.Axis, k.After),
		fig(k.FigureBefore), fig(k.FigureAfter), doc.FigureUnit, ci, k.LadderBefore, k.LadderAfter)
}

func better(lower bool) string {
	if lower {
		return "lower is better"
	}
	return "higher is better"
}

// axisLabel is v with the axis' unit: "256 QPs", "4096 B", "depth 16",
// "16 reads".
func axisLabel(axis string, v int) string {
	if a, ok := AxisOf(axis); ok {
		return fmt.Sprintf(a.Label, v)
	}
	return fmt.Sprint(v)
}

// fig is a figure with 4 significant digits.
func fig(v float64) string { return fmt.Sprintf("%.4g", v) }
