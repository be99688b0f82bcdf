package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// WriteMeshFairness writes an all-to-one mesh's fairness: per test, Jain's
// index over the senders' bandwidth and each flow's bandwidth and p99.
// Nothing for other patterns.
func WriteMeshFairness(w io.Writer, doc *result.MeshDocument, unit string) error {
	if len(doc.Fairness) == 0 {
		return nil
	}
	var b strings.Builder
	_, label, _ := result.Bandwidth{}.In(unit)
	for _, f := range doc.Fairness {
		jain := "n/a (latency test)"
		if f.Mode == result.ModeBW {
			jain = "n/a (fewer than 2 flows)"
		}
		if f.Jain != nil {
			jain = strconv.FormatFloat(*f.Jain, 'f', 3, 64)
		}
		fmt.Fprintf(&b, "incast fairness into %s, %s: Jain's index %s over %d senders\n", RankLabel(doc, doc.Root), result.NewKey(f.Op, f.Mode, f.SizeBytes, "").String(), jain, len(f.Flows))
		var rows [][]string
		for _, fl := range f.Flows {
			bw := "-"
			if f.Mode == result.ModeBW {
				bw = bwIn(fl.MBPerSec, unit)
			}
			rows = append(rows, []string{RankLabel(doc, fl.Client), bw, fl.P99.US()})
		}
		Table{{Head: "sender", Left: true}, {Head: "bw[" + label + "]"}, {Head: "p99[usec]"}}.Write(&b, rows)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
