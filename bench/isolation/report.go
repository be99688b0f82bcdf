package isolation

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/result"
)

// WriteReport writes doc as text: the victim's medians alone and beside
// each attacker, the ratios attacked/alone with their intervals and each
// attacker's own rate, then the verdicts of the bounds.
func WriteReport(w io.Writer, doc *result.IsolationDocument) error {
	var b strings.Builder
	fmt.Fprintf(&b, "isolation: victim %s, %d round%s, %s intervals\n", doc.Victim, doc.Repeat, plural(doc.Repeat), pct(doc.Confidence))
	fmt.Fprintf(&b, "victim timed: %s\n\n", doc.VictimInterval)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "victim (medians)\tp50 us\tp90 us\tp99 us\tp99.9 us\tp99.99 us\tmsg/s\tMB/s\n"
	fmt.Fprint(tw, head)
	row := func(name string, runs []result.IsolationRun) {
		fmt.Fprint(tw, name)
		for _, f := range result.IsolationFigures[:5] {
			fmt.Fprintf(tw, "\t%s", medianUS(runs, f))
		}
		var m, mb []float64
		for _, r := range runs {
			m, mb = append(m, r.Mpps), append(mb, r.MBPerSec)
		}
		fmt.Fprintf(tw, "\t%.0f\t%.3f\n", compare.MedianOf(m)*1e6, compare.MedianOf(mb))
	}
	row("alone", doc.Alone)
	for _, a := range doc.Attackers {
		row("beside "+a.Name, a.Runs)
	}
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "attacked/alone\tp50\tp90\tp99\tp99.9\tp99.99\tbandwidth\tattacker's own rate\n")
	for _, a := range doc.Attackers {
		fmt.Fprint(tw, a.Name)
		for _, f := range result.IsolationFigures {
			fmt.Fprintf(tw, "\t%s", ratioCell(a.Ratios, f))
		}
		fmt.Fprintf(tw, "\t%s\n", rateText(a.AchievedMedian, a.Load))
	}
	tw.Flush()
	for _, a := range doc.Attackers {
		fmt.Fprintf(&b, "  %s (%s): %s\n", a.Name, a.Class, a.Description)
	}
	if len(doc.Verdicts) > 0 {
		b.WriteString("\n")
		for _, v := range doc.Verdicts {
			rule := "crossed when the interval's lower end lies above"
			if v.Figure == result.FigureBandwidth {
				rule = "crossed when the interval's upper end lies below"
			}
			fmt.Fprintf(&b, "max-inflation %s=%gx, %s: %s %s (%s the bound)\n", v.Figure, v.Max, v.Attacker,
				strings.ToUpper(v.Verdict), ratioText(v.Ratio, v.Low, v.High), rule)
		}
	}
	for _, wmsg := range doc.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wmsg)
	}
	if doc.Partial {
		b.WriteString("partial: the rounds stopped early\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(c float64) string { return fmt.Sprintf("%g%%", c*100) }

// medianUS is the median of figure over runs in µs, or n/a.
func medianUS(runs []result.IsolationRun, figure string) string {
	var vs []float64
	for _, r := range runs {
		if v, ok := valueOf(r, figure); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", compare.MedianOf(vs)/1000)
}

func ratioCell(rs []result.InflationRatio, figure string) string {
	for _, r := range rs {
		if r.Figure == figure {
			return ratioText(r.Ratio, r.Low, r.High)
		}
	}
	return "n/a"
}

// rateText is an attacker's achieved rate: its QPs' Mpps and MB/s, or its
// registrations per second.
func rateText(r result.AttackerRate, l result.IsolationLoad) string {
	var parts []string
	if l.QPs > 0 {
		parts = append(parts, fmt.Sprintf("%.0f msg/s, %.1f MB/s", r.Mpps*1e6, r.MBPerSec))
	}
	if l.ChurnSizeBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.0f reg+dereg/s", r.RegistrationsPerSec))
	}
	return strings.Join(parts, "; ")
}
