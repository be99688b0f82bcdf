package main

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// isCliffsFile reports whether path (not stdin) holds a cliffs document.
func isCliffsFile(path string) bool {
	if path == "-" {
		return false
	}
	b, err := result.ReadInput(path)
	return err == nil && result.IsCliffsDocument(b)
}

// plotCliffs draws one cliffs document (plot --kind cliffs).
func plotCliffs(paths []string, kind, out string, stdout io.Writer) error {
	if len(paths) != 1 {
		return usageError{fmt.Errorf("--kind cliffs draws one cliffs document (got %d files)", len(paths))}
	}
	if kind != plot.KindCliffs && kind != plot.KindAuto {
		return usageError{fmt.Errorf("%s is a cliffs document: its plot is --kind cliffs, not %s", paths[0], kind)}
	}
	b, err := result.ReadInput(paths[0])
	if err != nil {
		return inputError{err}
	}
	if !result.IsCliffsDocument(b) {
		return inputError{fmt.Errorf("%s: not a cliffs document ('rdmabench cliffs --json')", paths[0])}
	}
	doc, err := result.ReadCliffs(b)
	if err != nil {
		return inputError{fmt.Errorf("%s: %w", paths[0], err)}
	}
	if err := plot.Cliffs(doc, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}
