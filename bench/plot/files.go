package plot

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// UsageError marks a plot that the files or the flags cannot give (the
// CLI's exit 2): a document of another kind than --kind, several files
// where the kind draws one, nothing to plot for the selection.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Files draws the result files at paths (each read once; "-" is stdin) as
// kind (KindAuto: by the documents) into out, the one call of `rdmabench
// plot`: one cliffs document's plot, one mesh document's heatmap, or the
// tests of run documents (Draw, labelled by their paths). It returns the
// files written, also those written before an error.
func Files(paths []string, kind string, sel Selection, out string) ([]string, error) {
	ins := result.OpenAll(paths) // each read once, its kind named
	if kind == KindCliffs || (len(ins) == 1 && ins[0].Kind == result.KindCliffs) {
		return cliffsFile(ins, kind, out)
	}
	if kind == KindHeatmap || (len(ins) == 1 && ins[0].Kind == result.KindMesh) {
		return heatmapFile(ins, kind, sel, out)
	}
	docs, err := result.Results(ins)
	if err != nil {
		return nil, err
	}
	written, err := Draw(docs, Labels(paths), kind, sel, out)
	return written, nothingToPlot(err)
}

// nothingToPlot marks an error wrapping ErrNothingToPlot as a UsageError.
func nothingToPlot(err error) error {
	if errors.Is(err, ErrNothingToPlot) {
		return UsageError{err}
	}
	return err
}

// cliffsFile draws one cliffs document (--kind cliffs).
func cliffsFile(ins []*result.Input, kind, out string) ([]string, error) {
	if len(ins) != 1 {
		return nil, UsageError{fmt.Errorf("--kind cliffs draws one cliffs document (got %d files)", len(ins))}
	}
	if kind != KindCliffs && kind != KindAuto {
		return nil, UsageError{fmt.Errorf("%s is a cliffs document: its plot is --kind cliffs, not %s", ins[0].Path, kind)}
	}
	doc, err := ins[0].Cliffs()
	if err != nil {
		return nil, err
	}
	if err := Cliffs(doc, out); err != nil {
		return nil, err
	}
	return []string{out}, nil
}

// heatmapFile draws one mesh document's heatmap (--kind heatmap).
func heatmapFile(ins []*result.Input, kind string, sel Selection, out string) ([]string, error) {
	if len(ins) != 1 {
		return nil, UsageError{fmt.Errorf("--kind heatmap draws one mesh document (got %d files)", len(ins))}
	}
	if kind != KindHeatmap && kind != KindAuto {
		return nil, UsageError{fmt.Errorf("%s is a mesh document: its plot is --kind heatmap, not %s", ins[0].Path, kind)}
	}
	doc, err := ins[0].Mesh()
	if err != nil {
		return nil, err
	}
	if err := Heatmap(doc, sel, out); err != nil {
		return nil, nothingToPlot(err)
	}
	return []string{out}, nil
}
