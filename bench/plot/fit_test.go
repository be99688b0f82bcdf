package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestTextFits: long titles and legend names stay inside the picture, in
// the line plots and the heatmap, with glyph widths estimated for a wide
// fallback font (fails without the title wrap and the legend's room).
func TestTextFits(t *testing.T) {
	dir := t.TempDir()
	names := []string{"RoCE rxe1 (rdma_rxe) write p99.9", "iWARP siw1 (siw) read p99.9", "TCP lo send p50",
		"InfiniBand mlx5_0 (mlx5_core) fetch_add p99.9"}
	var lines []Line
	for i, n := range names {
		lines = append(lines, Line{Name: n, Sizes: []float64{2, 64, 4096}, Ys: []float64{1 + float64(i), 2, 30}, Color: i})
	}
	title := "p50 and p99.9 latency against message size, per fabric\n" +
		"SEND, WRITE latency: RTT/2; READ, FETCH_ADD, CMP_SWAP latency: RTT; a long title that no plot of ours prints today " +
		"(software RDMA: RoCE rxe1 (rdma_rxe), iWARP siw1 (siw))"
	svg := filepath.Join(dir, "lines.svg")
	if err := SizeLines(title, "latency (µs)", lines, true, svg); err != nil {
		t.Fatal(err)
	}
	checkFits(t, svg, names)

	d := &result.MeshDocument{}
	for r := range 3 {
		d.Ranks = append(d.Ranks, result.MeshRank{Rank: r, Host: "node"})
	}
	for i, e := range [][2]int{{0, 1}, {1, 2}, {2, 0}} {
		r := result.Result{Op: "cmp_swap", Mode: "lat", SizeBytes: 65536}
		r.Latency.P99_99 = result.Nanos{NS: float64(1000 * (i + 1)), OK: true}
		d.Pairs = append(d.Pairs, result.MeshPair{Client: e[0], Server: e[1], Status: result.StatusOK, Results: []result.Result{r}})
	}
	hm := filepath.Join(dir, "h.svg")
	if err := Heatmap(d, Selection{Metric: "p99_99"}, hm); err != nil {
		t.Fatal(err)
	}
	checkFits(t, hm, nil)
}

func checkFits(t *testing.T, path string, left []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	over, err := Overflows(b, left)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range over {
		t.Errorf("%s: text past the edge: %s", filepath.Base(path), o)
	}
}

func TestWrapText(t *testing.T) {
	size := vg.Points(10)
	for _, c := range []struct {
		in    string
		width vg.Length
		want  string
	}{
		{"short", 500, "short"},
		{"SEND, WRITE latency: RTT/2; READ latency: RTT", textWidth("SEND, WRITE latency: RTT/2;", size), "SEND, WRITE latency: RTT/2;\nREAD latency: RTT"},
		{"send lat 2B: p99 latency, us (row: client, column: server)", textWidth("(row: client, column: server)", size) + 1,
			"send lat 2B: p99 latency, us\n(row: client, column: server)"},
		{"a b c d", textWidth("a b", size), "a b\nc d"},
		{"unbreakable-word", 5, "unbreakable-word"},
		{"two\nlines that are too wide", textWidth("lines that", size), "two\nlines that\nare too\nwide"},
	} {
		got := wrapText(c.in, size, c.width)
		if got != c.want {
			t.Errorf("wrapText(%q, %v) = %q, want %q", c.in, c.width, got, c.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if textWidth(l, size) > c.width && strings.Contains(l, " ") {
				t.Errorf("%q: line %q is wider than %v", c.in, l, c.width)
			}
		}
	}
}
