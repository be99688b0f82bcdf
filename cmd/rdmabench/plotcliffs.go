package main

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// plotCliffs draws one cliffs document (plot --kind cliffs).
func plotCliffs(ins []*result.Input, kind, out string, stdout io.Writer) error {
	if len(ins) != 1 {
		return usageError{fmt.Errorf("--kind cliffs draws one cliffs document (got %d files)", len(ins))}
	}
	if kind != plot.KindCliffs && kind != plot.KindAuto {
		return usageError{fmt.Errorf("%s is a cliffs document: its plot is --kind cliffs, not %s", ins[0].Path, kind)}
	}
	doc, err := ins[0].Cliffs()
	if err != nil {
		return err
	}
	if err := plot.Cliffs(doc, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}
