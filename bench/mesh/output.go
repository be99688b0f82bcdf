package mesh

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// OutputConfig is how rank 0 writes a run's results (Output).
type OutputConfig struct {
	// JSON is --json: the document's path (with rails, the base of one
	// path per rail: RailPath), "-" for standard output (no text report
	// then), "" for none.
	JSON     string
	Unit     string  // the matrix's unit (--unit)
	OutlierK float64 // MAD deviations that make an outlier (--outlier-k)
	W        io.Writer
}

// Docs are rank 0's documents: one per rail with rails, else the one
// (nil on the other ranks).
func (o *Outcome) Docs() []*result.MeshDocument {
	if o.Doc == nil {
		return nil
	}
	if len(o.Rails) > 0 {
		return o.Rails
	}
	return []*result.MeshDocument{o.Doc}
}

// OwnFailed is how many of this rank's own pairs failed.
func (o *Outcome) OwnFailed() int {
	n := 0
	for _, p := range o.Own {
		if p.Status != result.StatusOK {
			n++
		}
	}
	return n
}

// Output writes rank 0's outcome: each document's text report to c.W
// (with rails, under a heading per rail) unless the documents go to
// standard output, and each document to its JSON path. It returns the
// pairs that failed and all pairs, over every rail.
func Output(o *Outcome, c OutputConfig) (failed, total int, err error) {
	docs, rails := o.Docs(), len(o.Rails) > 0
	for r, doc := range docs {
		if c.JSON != "-" {
			if rails {
				if r > 0 {
					fmt.Fprintln(c.W)
				}
				fmt.Fprintf(c.W, "== rail %d: %s ==\n", r, railNICs(doc))
			}
			if err := writeReport(c.W, doc, c.Unit, c.OutlierK, r, rails); err != nil {
				return failed, total, err
			}
		}
		if c.JSON != "" {
			path := c.JSON
			if rails {
				path = RailPath(c.JSON, r)
			}
			if err := result.WriteMeshJSON(path, doc); err != nil {
				return failed, total, err
			}
		}
		failed, total = failed+doc.Failed(), total+len(doc.Pairs)
	}
	return failed, total, nil
}

// writeReport writes one document's text report: the matrix, the
// outliers and the NICs behind them (on rail r with rails), the incast
// fairness (all-to-one), the warnings.
func writeReport(w io.Writer, doc *result.MeshDocument, unit string, k float64, r int, rails bool) error {
	if err := report.WriteMeshMatrix(w, doc, unit); err != nil {
		return err
	}
	outs := report.MeshOutliers(doc, k)
	if err := report.WriteMeshOutliers(w, outs, k); err != nil {
		return err
	}
	what := "the fabric"
	if rails {
		what = fmt.Sprintf("rail %d", r)
	}
	if err := report.WriteMeshOutlierNICs(w, doc, outs, what); err != nil {
		return err
	}
	if err := report.WriteMeshFairness(w, doc, unit); err != nil { // all-to-one only
		return err
	}
	for _, warn := range doc.Warnings {
		fmt.Fprintf(w, "WARNING: %s\n", warn)
	}
	return nil
}

// railNICs names each rank's NIC on a rail's document, for its heading.
func railNICs(doc *result.MeshDocument) string {
	var parts []string
	for _, r := range doc.Ranks {
		parts = append(parts, fmt.Sprintf("%s %s", report.RankLabel(doc, r.Rank), r.Device))
	}
	return strings.Join(parts, ", ")
}
