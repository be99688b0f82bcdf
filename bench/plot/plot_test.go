package plot

import (
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"

	"gonum.org/v1/plot/plotter"

	"github.com/rdmabench/rdmabench/hist"
)

// plotFixtures reads the two SoftRoCE guest runs in testdata: loopback,
// send/write/read, lat and bw, sizes 2, 1024 and 65536 bytes, 5000
// iterations (50 completion samples in bw mode below 64K).
func plotFixtures(t *testing.T) ([]*result.Document, []string) {
	t.Helper()
	paths := []string{"testdata/a.json", "testdata/b.json"}
	docs := make([]*result.Document, len(paths))
	for i, p := range paths {
		d, err := result.ReadJSONFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = d
	}
	return docs, Labels(paths)
}

// plotResult returns a result of op, mode and size whose samples are vals
// (ns), reported divided by div.
func plotResult(t *testing.T, op, mode string, size int, div float64, vals ...int64) result.Result {
	t.Helper()
	h := hist.New()
	for _, v := range vals {
		h.Record(v)
	}
	r := result.Result{Op: op, Mode: mode, SizeBytes: size, Iterations: int64(len(vals))}
	if err := r.SetLatency(h, div); err != nil {
		t.Fatal(err)
	}
	r.Bandwidth = result.NewBandwidth(size, int64(len(vals)), 1e9)
	return r
}

// svgContent is what parseSVG found in an SVG file.
type svgContent struct {
	texts []string // character data of the <text> elements
	paths int      // <path> elements
}

func (s svgContent) has(text string) bool {
	return slices.Contains(s.texts, text)
}

func (s svgContent) hasSub(sub string) bool {
	return slices.ContainsFunc(s.texts, func(t string) bool { return strings.Contains(t, sub) })
}

// parseSVG parses path with encoding/xml, failing t if it is not well-formed
// XML with an <svg> root.
func parseSVG(t *testing.T, path string) svgContent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	var c svgContent
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && tok.Name.Local != "svg" {
				t.Fatalf("%s: root element <%s>, want <svg>", path, tok.Name.Local)
			}
			stack = append(stack, tok.Name.Local)
			if tok.Name.Local == "path" {
				c.paths++
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] == "text" {
				c.texts = append(c.texts, strings.TrimSpace(string(tok)))
			}
		}
	}
	if len(stack) != 0 {
		t.Fatalf("%s: unclosed elements %v", path, stack)
	}
	return c
}

func TestPlotKindsSVG(t *testing.T) {
	docs, labels := plotFixtures(t)
	dir := t.TempDir()
	tests := []struct {
		name      string
		plot      func([]*result.Document, []string, Selection, string) error
		sel       Selection
		texts     []string // exact <text> contents
		subs      []string // substrings of some <text>
		minPaths  int
		wantNoSub []string
	}{
		{
			name: "percentile", plot: Percentiles,
			texts: []string{"a send lat 2B", "a write lat 2B", "a read lat 2B", "b send lat 2B", "b read lat 2B",
				"0%", "90%", "99%", "99.9%", "percentile (log scale of 1/(1-percentile)); the tail past what the samples back (n/a in the tables) is not drawn"},
			subs:      []string{"latency (µs", "SEND, WRITE latency: half round trip (RTT/2)", "READ latency: full round trip (RTT)", "(software RDMA)", "2-byte messages"},
			minPaths:  6 + 10,
			wantNoSub: []string{" bw ", "1024B"},
		},
		{
			name: "cdf", plot: CDFs, sel: Selection{Ops: []string{result.OpSend}, Sizes: []int{1024}},
			texts:     []string{"a send lat 1024B", "b send lat 1024B", "latency (µs, log scale)", "cumulative fraction of samples", "0.5", "1"},
			subs:      []string{"SEND latency: half round trip (RTT/2)", "cumulative distribution", "(software RDMA)"},
			minPaths:  2 + 10,
			wantNoSub: []string{"read lat", "write lat"},
		},
		{
			name: "size-latency", plot: SizeLatencies,
			texts: []string{"a send lat p50", "a send lat p99", "b read lat p50", "b write lat p99",
				"message size (bytes, log2 scale)", "2", "1K", "64K"},
			subs:     []string{"p50, p99 latency (µs", "p50 and p99 against message size", "(software RDMA)"},
			minPaths: 12 + 12*3, // lines, and a glyph per point
		},
		{
			name: "size-latency metric", plot: SizeLatencies, sel: Selection{Metric: "p99_9", Ops: []string{result.OpRead}},
			texts:     []string{"a read lat p99.9", "b read lat p99.9", "message size (bytes, log2 scale)"},
			subs:      []string{"p99.9 latency (µs", "READ latency: full round trip (RTT)"},
			minPaths:  2 + 2*3,
			wantNoSub: []string{"p50", "send lat"},
		},
		{
			name: "size-bw", plot: SizeBandwidth,
			texts:     []string{"a send bw", "a write bw", "b read bw", "message size (bytes, log2 scale)", "64K"},
			subs:      []string{"bandwidth (MiB/s", "SEND, WRITE, READ bandwidth in bw mode against message size", "(software RDMA)"},
			minPaths:  6 + 6*3,
			wantNoSub: []string{" lat"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".svg")
			if err := tc.plot(docs, labels, tc.sel, out); err != nil {
				t.Fatal(err)
			}
			c := parseSVG(t, out)
			for _, s := range tc.texts {
				if !c.has(s) {
					t.Errorf("no text %q in %q", s, c.texts)
				}
			}
			for _, s := range tc.subs {
				if !c.hasSub(s) {
					t.Errorf("no text containing %q in %q", s, c.texts)
				}
			}
			for _, s := range tc.wantNoSub {
				if c.hasSub(s) {
					t.Errorf("unexpected text containing %q in %q", s, c.texts)
				}
			}
			if c.paths < tc.minPaths {
				t.Errorf("%d <path> elements, want at least %d", c.paths, tc.minPaths)
			}
		})
	}
}

func TestPlotAuto(t *testing.T) {
	docs, labels := plotFixtures(t)
	dir := t.TempDir()
	tests := []struct {
		name  string
		docs  []*result.Document
		sel   Selection
		kinds []string
		want  []string
	}{
		{"two sweeps", docs, Selection{}, []string{KindPercentile, KindSizeLatency, KindSizeBW},
			[]string{"x-percentile.svg", "x-size-latency.svg", "x-size-bw.svg"}},
		{"one sweep", docs[:1], Selection{}, []string{KindSizeLatency, KindSizeBW},
			[]string{"x-size-latency.svg", "x-size-bw.svg"}},
		{"one sweep, lat", docs[:1], Selection{Modes: []string{result.ModeLat}}, []string{KindSizeLatency}, []string{"x.svg"}},
		{"one size", docs[:1], Selection{Sizes: []int{2}}, []string{KindPercentile}, []string{"x.svg"}},
		{"one test", docs[:1], Selection{Ops: []string{result.OpRead}, Modes: []string{result.ModeLat}, Sizes: []int{1024}},
			[]string{KindPercentile}, []string{"x.svg"}},
		{"two runs, one test", docs, Selection{Ops: []string{result.OpRead}, Modes: []string{result.ModeLat}, Sizes: []int{1024}},
			[]string{KindPercentile}, []string{"x.svg"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Kinds(tc.docs, tc.sel); !slices.Equal(got, tc.kinds) {
				t.Errorf("Kinds = %q, want %q", got, tc.kinds)
			}
			sub := t.TempDir()
			got, err := Draw(tc.docs, labels, KindAuto, tc.sel, filepath.Join(sub, "x.svg"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				parseSVG(t, got[i])
				got[i] = filepath.Base(got[i])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("wrote %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := Draw(docs, labels, "pie", Selection{}, filepath.Join(dir, "x.svg")); err == nil || !strings.Contains(err.Error(), `"pie"`) {
		t.Errorf("kind pie: err %v, want it named", err)
	}
}

func TestPlotPNG(t *testing.T) {
	docs, labels := plotFixtures(t)
	out := filepath.Join(t.TempDir(), "p.PNG")
	if err := Percentiles(docs, labels, Selection{}, out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", out, err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("PNG is %v", b)
	}
}

func TestPlotFormat(t *testing.T) {
	for path, want := range map[string]string{"a.svg": "svg", "dir.x/B.SVG": "svg", "c.png": "png"} {
		if got, err := Format(path); err != nil || got != want {
			t.Errorf("Format(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	for path, name := range map[string]string{"a.pdf": `".pdf"`, "a.svg.gz": `".gz"`, "plot": "no extension"} {
		if _, err := Format(path); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Format(%q): err %v, want one naming %s", path, err, name)
		}
	}
	docs, labels := plotFixtures(t)
	out := filepath.Join(t.TempDir(), "a.jpg")
	if _, err := Draw(docs, labels, KindPercentile, Selection{}, out); err == nil || !strings.Contains(err.Error(), ".jpg") {
		t.Errorf("Plot to .jpg: err %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("Plot wrote a .jpg")
	}
}

func TestPlotLabels(t *testing.T) {
	got := Labels([]string{"runs/a.json", "b.json", "x/c.json", "y/c.json", "-"})
	want := []string{"a", "b", "x/c", "y/c", "stdin"}
	if !slices.Equal(got, want) {
		t.Errorf("Labels = %q, want %q", got, want)
	}
}

// The plotted latencies are those of latency_ns: the histogram divided by
// histogram_divisor (RTT/2 for SEND and WRITE, RTT for READ).
func TestPlotPointsUseDivisor(t *testing.T) {
	docs, _ := plotFixtures(t)
	seen := map[float64]bool{}
	for _, r := range docs[0].Results {
		if r.Mode != result.ModeLat {
			continue
		}
		seen[r.HistogramDivisor] = true
		xys, all, err := percentilePoints(&r)
		if err != nil {
			t.Fatal(err)
		}
		if all {
			t.Errorf("%s %d: the whole distribution drawn, past what %d samples back", r.Op, r.SizeBytes, r.Samples)
		}
		i := slices.IndexFunc(xys, func(p plotter.XY) bool { return math.Abs(p.X-2) < 1e-6 })
		if i < 0 {
			t.Fatalf("%s %d: no p50 point in %v", r.Op, r.SizeBytes, xys)
		}
		if got, want := xys[i].Y, r.Latency.P50.NS/1000; math.Abs(got-want)/want > 0.003 {
			t.Errorf("%s %d: p50 point %.3f µs, latency_ns.p50 %.3f µs", r.Op, r.SizeBytes, got, want)
		}
		if got, want := xys[0].Y, r.Latency.Min/1000; math.Abs(got-want)/want > 0.003 {
			t.Errorf("%s %d: first point %.3f µs, latency_ns.min %.3f µs", r.Op, r.SizeBytes, got, want)
		}
		// the last point is at a percentile the samples back, never past it
		last := xys[len(xys)-1]
		if q := 100 * (1 - 1/last.X); hist.MinSamples(q, 0.95) > r.Samples || last.Y > r.Latency.Max/1000*1.003 {
			t.Errorf("%s %d: last point %v (p%g) is past what %d samples back", r.Op, r.SizeBytes, last, q, r.Samples)
		}
		cdf, err := cdfPoints(&r)
		if err != nil {
			t.Fatal(err)
		}
		if c0, c1 := cdf[0], cdf[len(cdf)-1]; c0.Y != 0 || c1.Y != 1 ||
			math.Abs(c0.X-r.Latency.Min/1000)/c0.X > 0.003 || math.Abs(c1.X-r.Latency.Max/1000)/c1.X > 0.003 {
			t.Errorf("%s %d: CDF from %v to %v; latency_ns min %v max %v", r.Op, r.SizeBytes, c0, c1, r.Latency.Min, r.Latency.Max)
		}
		for j := 1; j < len(cdf); j++ {
			if cdf[j].X < cdf[j-1].X || cdf[j].Y < cdf[j-1].Y {
				t.Fatalf("%s %d: CDF decreases at %d: %v %v", r.Op, r.SizeBytes, j, cdf[j-1], cdf[j])
			}
		}
	}
	if !seen[1] || !seen[2] {
		t.Errorf("fixture divisors %v, want both 1 and 2", seen)
	}
}

func TestPlotSingleRunNA(t *testing.T) {
	// One hardware run whose 2-byte test has a single sample: every
	// percentile is n/a (null in JSON), p99 is n/a below 100 samples.
	many := make([]int64, 500)
	for i := range many {
		many[i] = int64(2000 + i*7)
	}
	doc := &result.Document{SchemaVersion: result.SchemaVersion, Results: []result.Result{
		plotResult(t, result.OpSend, result.ModeLat, 2, 2, 3000),
		plotResult(t, result.OpSend, result.ModeLat, 64, 2, many[:50]...),
		plotResult(t, result.OpSend, result.ModeLat, 4096, 2, many...),
	}}
	if r := doc.Results[0]; r.Latency.P50.OK || r.Latency.P99.OK || r.Latency.P99_99.OK {
		t.Fatalf("fixture: one-sample percentiles are not n/a: %+v", r.Latency)
	}
	docs, labels := []*result.Document{doc}, []string{"hw"}
	dir := t.TempDir()

	// The percentile plot draws the one-sample test as a single point.
	out := filepath.Join(dir, "one.svg")
	if err := Percentiles(docs, labels, Selection{}, out); err != nil {
		t.Fatal(err)
	}
	c := parseSVG(t, out)
	if !c.has("hw send lat 2B") || c.hasSub("software RDMA") || !c.hasSub("SEND latency: half round trip (RTT/2)") {
		t.Errorf("texts %q", c.texts)
	}

	// p99 is n/a at 2 and 64 bytes: the line has the 4096-byte point only.
	out = filepath.Join(dir, "p99.svg")
	if err := SizeLatencies(docs, labels, Selection{Metric: "p99"}, out); err != nil {
		t.Fatal(err)
	}
	if c := parseSVG(t, out); !c.has("hw send lat p99") {
		t.Errorf("texts %q", c.texts)
	}

	// p99.9 is n/a everywhere.
	err := SizeLatencies(docs, labels, Selection{Metric: "p99_9"}, filepath.Join(dir, "p999.svg"))
	if !errors.Is(err, ErrNothingToPlot) || !strings.Contains(err.Error(), "p99_9") || !strings.Contains(err.Error(), "n/a") {
		t.Errorf("all n/a: err %v", err)
	}
	// So is every statistic of the one-sample test but min, mean and max.
	err = SizeLatencies(docs, labels, Selection{Sizes: []int{2}}, filepath.Join(dir, "p50.svg"))
	if !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("one sample, p50 and p99: err %v", err)
	}
	if err := SizeLatencies(docs, labels, Selection{Sizes: []int{2}, Metric: "max"}, filepath.Join(dir, "max.svg")); err != nil {
		t.Errorf("one sample, max: %v", err)
	}
	if err := SizeLatencies(docs, labels, Selection{Metric: "p42"}, filepath.Join(dir, "x.svg")); err == nil || !strings.Contains(err.Error(), "p42") {
		t.Errorf("metric p42: err %v", err)
	}
}

func TestPlotEmptySelection(t *testing.T) {
	docs, labels := plotFixtures(t)
	dir := t.TempDir()
	sel := Selection{Ops: []string{result.OpFetchAdd}, Sizes: []int{3}}
	for _, kind := range KindNames {
		out := filepath.Join(dir, kind+".svg")
		written, err := Draw(docs, labels, kind, sel, out)
		if !errors.Is(err, ErrNothingToPlot) || len(written) != 0 {
			t.Errorf("%s: wrote %q, err %v", kind, written, err)
			continue
		}
		for _, s := range []string{"op fetch_add", "size 3", "send,write,read", "lat,bw", "2,1024,65536"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %q", kind, err, s)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: wrote %s", kind, out)
		}
	}
	if _, err := Draw(nil, nil, KindAuto, Selection{}, filepath.Join(dir, "none.svg")); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("no documents: err %v", err)
	}
	empty := []*result.Document{{SchemaVersion: result.SchemaVersion}}
	if err := Percentiles(empty, []string{"e"}, Selection{}, filepath.Join(dir, "e.svg")); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("no results: err %v", err)
	}
	// Bandwidth-mode results without a histogram cannot be drawn as percentiles.
	nohist := []*result.Document{{SchemaVersion: result.SchemaVersion, Results: []result.Result{{Op: result.OpSend, Mode: result.ModeBW, SizeBytes: 2}}}}
	err := CDFs(nohist, []string{"n"}, Selection{}, filepath.Join(dir, "n.svg"))
	if !errors.Is(err, ErrNothingToPlot) || !strings.Contains(err.Error(), "histogram") {
		t.Errorf("no histogram: err %v", err)
	}
}

func TestPlotTicks(t *testing.T) {
	pt := percentileTicks{}.Ticks(0, 5)
	var got []string
	for _, tk := range pt {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}; !slices.Equal(got, want) {
		t.Errorf("percentile tick labels %q, want %q", got, want)
	}
	got = nil
	for _, tk := range (logTicks{}).Ticks(math.Log10(20), math.Log10(2000)) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"20", "50", "100", "200", "500", "1000", "2000"}; !slices.Equal(got, want) {
		t.Errorf("log tick labels %q, want %q", got, want)
	}
	got = nil
	for _, tk := range (linearTicks{}).Ticks(0, 5300) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0", "1000", "2000", "3000", "4000", "5000"}; !slices.Equal(got, want) {
		t.Errorf("linear tick labels %q, want %q", got, want)
	}
	for _, tc := range []struct {
		b    int64
		want string
	}{{2, "2"}, {1000, "1000"}, {1024, "1K"}, {65536, "64K"}, {3 << 20, "3M"}, {1 << 30, "1G"}} {
		if got := report.SizeLabel(tc.b); got != tc.want {
			t.Errorf("report.SizeLabel(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
