package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// WriteRepeatTable writes, for every result that ran several times
// (--repeat), how each figure spread over its runs: median, min, max and
// coefficient of variation; latencies in µs, bandwidth in unit. It writes
// nothing when no result was repeated.
func WriteRepeatTable(w io.Writer, results []result.Result, unit string) error {
	t := Table{{Head: "test", Left: true}, {Head: "runs"}, {Head: "figure", Left: true}, {Head: "median"}, {Head: "min"}, {Head: "max"}, {Head: "CV[%]"}}
	var rows [][]string
	for _, r := range results {
		if r.Repeat == nil {
			continue
		}
		name := result.KeyOf(&r).String()
		for _, f := range r.Repeat.Figures {
			label, format := figureFormat(f.Figure, r.Mode, unit)
			rows = append(rows, []string{name, strconv.Itoa(f.Runs), label, format(f.Median), format(f.Min), format(f.Max),
				strconv.FormatFloat(f.CV*100, 'f', 1, 64)})
			name = ""
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("repeated runs (--repeat): the figures in the tables above are the medians of the runs'\n")
	t.Write(&b, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// figureFormat is the label and formatter of a Spread figure.
func figureFormat(figure, mode, unit string) (string, func(float64) string) {
	switch figure {
	case "bw_mb_per_s":
		_, label, _ := result.Bandwidth{}.In(unit)
		return "BW[" + label + "]", func(v float64) string {
			bw, _, _ := result.Bandwidth{MBPerSec: v, MiBPerSec: v * 1e6 / (1 << 20), GbitPerSec: v * 8 / 1e3}.In(unit)
			return strconv.FormatFloat(bw, 'f', 2, 64)
		}
	case "mpps":
		return "MsgRate[Mpps]", func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	}
	if mode == result.ModeBW {
		figure = "comp_" + figure
	}
	return figure + "[usec]", US
}
