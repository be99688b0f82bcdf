package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestCliffs(t *testing.T) {
	doc := &result.CliffsDocument{Test: "write bw 64B", Axis: "qps", Figure: "mpps", FigureUnit: "Mpps", Runs: 3,
		Points: []result.CliffsPoint{{Value: 1, Median: 1, Min: 0.9, Max: 1.1}, {Value: 2, Median: 1, Min: 0.9, Max: 1.1},
			{Value: 3, Median: 0.5, Min: 0.4, Max: 0.6}, {Value: 4, Median: 0.5, Min: 0.4, Max: 0.6}},
		Knees: []result.CliffsKnee{{Before: 2, After: 3, FigureBefore: 1, FigureAfter: 0.5, Drop: 0.5}}}
	for _, ext := range []string{"svg", "png"} {
		out := filepath.Join(t.TempDir(), "c."+ext)
		if err := Cliffs(doc, out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", out, len(b), err)
		}
		if ext == "svg" && !strings.Contains(string(b), "knee -50% between 2 and 3") {
			t.Error("svg lacks the knee in its title")
		}
	}
	if err := Cliffs(&result.CliffsDocument{}, filepath.Join(t.TempDir(), "e.svg")); err == nil || !strings.Contains(err.Error(), "nothing to plot") {
		t.Errorf("empty: %v", err)
	}
}
