package plot

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
)

func TestSizeLines(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "lines.svg")
	lines := []Line{
		{Name: "A send p50", Sizes: []float64{2, 65536}, Ys: []float64{13.4, 4007.9}},
		{Name: "A send p99.9", Sizes: []float64{2, 65536}, Ys: []float64{12943.4, 87818.2}, Dash: 1},
		{Name: "B read p50", Sizes: []float64{2, 65536}, Ys: []float64{0, math.NaN()}, Color: 1, Glyph: 2}, // no drawable point
	}
	if err := SizeLines("title", "latency (µs)", lines, true, out); err != nil {
		t.Fatal(err)
	}
	c := parseSVG(t, out)
	for _, s := range []string{"title", "A send p50", "A send p99.9", "latency (µs, log scale)", "message size (bytes, log2 scale)", "2", "64K"} {
		if !c.has(s) {
			t.Errorf("no text %q in %q", s, c.texts)
		}
	}
	if c.has("B read p50") {
		t.Error("a line without drawable points is in the legend")
	}
	err := SizeLines("t", "y", lines[2:], true, filepath.Join(dir, "none.svg"))
	if !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("no points: %v, want ErrNothingToPlot", err)
	}
	if err := SizeLines("t", "y", lines, true, filepath.Join(dir, "x.gif")); err == nil {
		t.Error(".gif accepted")
	}
}
