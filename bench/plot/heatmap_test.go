package plot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestHeatmap(t *testing.T) {
	d := &result.MeshDocument{}
	for r, h := range []string{"node-a", "node-b", "node-c"} {
		d.Ranks = append(d.Ranks, result.MeshRank{Rank: r, Host: h})
	}
	for i, e := range [][2]int{{0, 1}, {1, 2}, {2, 0}} {
		p := result.MeshPair{Client: e[0], Server: e[1], Status: result.StatusOK}
		r := result.Result{Op: "send", Mode: "lat", SizeBytes: 2}
		r.Latency.P99 = result.Nanos{NS: float64(1000 * (i + 1)), OK: true}
		p.Results = []result.Result{r}
		if i == 2 {
			p.Status, p.Results = result.StatusFailed, nil
		}
		d.Pairs = append(d.Pairs, p)
	}
	path := filepath.Join(t.TempDir(), "h.svg")
	if err := Heatmap(d, Selection{}, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node-a(0)", "node-b(1)", "node-c(2)", "FAIL", "send lat 2B", "p99"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("heatmap lacks %q", want)
		}
	}
	if err := Heatmap(d, Selection{Modes: []string{"bw"}}, path); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("bw of a lat-only mesh: %v", err)
	}
}
