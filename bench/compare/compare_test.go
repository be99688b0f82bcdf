package compare

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/golden"
)

// The fixtures in testdata are real SoftRoCE loopback runs
// (rdmabench loopback --mode lat,bw --size 2,4K --iters 2000 in the qemu
// guest) with the histograms dropped; c.json is b.json with its device
// renamed to rxe1 and its read tests removed.
func compareDocs(t *testing.T, names ...string) []*result.Document {
	t.Helper()
	var docs []*result.Document
	for _, n := range names {
		d, err := result.ReadJSONFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

func TestCompareTable(t *testing.T) {
	docs := compareDocs(t, "a.json", "b.json", "c.json")
	c := Compare(docs, []string{"a.json", "b.json", "c.json"})
	if len(c.Tests) != 12 {
		t.Fatalf("%d tests, want 12", len(c.Tests))
	}
	if got := c.Runs[2].Label; got != "c.json (rxe1)" {
		t.Errorf("label %q, want the device added as the runs differ", got)
	}
	var b bytes.Buffer
	if err := c.WriteTable(&b, nil, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare_table.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{"send lat 2B", "p99.9[usec]", "BW[MiB/sec]", "comp_p50[usec]", " -\n", "n/a", "x)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if err := c.WriteTable(&b, nil, "KB", report.Width); err == nil {
		t.Error(`unit "KB" accepted`)
	}
}

func TestCompareMarkdown(t *testing.T) {
	docs := compareDocs(t, "a.json", "b.json")
	c := Compare(docs, []string{"a.json", "b.json"})
	if got := c.Runs[1].Label; got != "b.json" {
		t.Errorf("label %q, want no device for runs on the same device", got)
	}
	var b bytes.Buffer
	if err := c.WriteMarkdown(&b, []string{MetricP50, MetricP99, MetricBW, MetricMpps}, result.UnitGb); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare_markdown.golden", b.Bytes())
	// Every table line has the same number of cells.
	for i, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !strings.HasPrefix(l, "|") {
			break
		}
		if n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"); n != 5 {
			t.Errorf("line %d has %d bars, want 5: %q", i+1, n, l)
		}
	}
}

func TestCompareCells(t *testing.T) {
	ok := func(ns float64) result.Nanos { return result.Nanos{NS: ns, OK: true} }
	base := &result.Document{Env: result.Env{Device: "mlx5_0"}, Results: []result.Result{
		{Op: "send", Mode: "lat", SizeBytes: 2, Latency: result.Latency{Count: 50, P50: ok(2000), Max: 9000}},
		{Op: "write", Mode: "bw", SizeBytes: 65536, Bandwidth: result.NewBandwidth(65536, 1000, 1e6)},
	}}
	cur := &result.Document{Env: result.Env{Device: "mlx5_0"}, Results: []result.Result{
		{Op: "send", Mode: "lat", SizeBytes: 2, Latency: result.Latency{Count: 5000, P50: ok(2100), P99: ok(5000), Max: 12000}},
		{Op: "send", Mode: "lat", SizeBytes: 2, Latency: result.Latency{Count: 1, P50: ok(1), Max: 1}}, // duplicate: ignored
		{Op: "read", Mode: "lat", SizeBytes: 2, Latency: result.Latency{Count: 2, P50: ok(3000), Max: 3100}},
	}}
	c := Compare([]*result.Document{base, cur}, nil)
	if c.Runs[0].Name != "run1" || c.Runs[1].Label != "run2" {
		t.Errorf("default names %q, %q", c.Runs[0].Name, c.Runs[1].Label)
	}
	var b bytes.Buffer
	if err := c.WriteTable(&b, []string{"p50", "p99", "max", "bw"}, result.UnitMB, report.Width); err != nil {
		t.Fatal(err)
	}
	want := ` test          metric              run1           run2
 send lat 2B   p50[usec]           2.00   2.10 (1.05x)
               p99[usec]            n/a           5.00
               max[usec]           9.00  12.00 (1.33x)
 write bw 64K  comp_p50[usec]       n/a              -
               comp_p99[usec]       n/a              -
               comp_max[usec]       n/a              -
               BW[MB/sec]      65536.00              -
 read lat 2B   p50[usec]              -           3.00
               p99[usec]              -            n/a
               max[usec]              -           3.10
(N.NNx): value / the value of run1; latency: above 1 is slower, BW and MsgRate: above 1 is faster
comp_*: completion latency of bw tests, post to completion of signaled work requests
n/a: too few samples for the percentile's 95 % confidence interval (p50 needs 6 samples, p90 36, p99 368, p99.9 3688,
  p99.99 36887)
-: the run has no such test
`
	out := b.String()
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestCompareGobench(t *testing.T) {
	defer func(a string) { gobenchArch = a }(gobenchArch)
	gobenchArch = "amd64"
	docs := compareDocs(t, "a.json", "c.json")
	var b bytes.Buffer
	if err := WriteGobench(&b, docs); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare_gobench.golden", b.Bytes())
	out := b.String()

	// The syntax of golang.org/x/perf/benchfmt: configuration lines
	// "key: value" with a lower-case key without spaces, unit lines, and
	// result lines "BenchmarkName iterations (value unit)+".
	sc := bufio.NewScanner(&b)
	results := 0
	for sc.Scan() {
		l := sc.Text()
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "Benchmark"):
			results++
			if len(f) < 4 || len(f)%2 != 0 {
				t.Errorf("result line with %d fields: %q", len(f), l)
				continue
			}
			if n, err := strconv.Atoi(f[1]); err != nil || n < 1 {
				t.Errorf("iterations %q: %q", f[1], l)
			}
			for i := 2; i < len(f); i += 2 {
				if _, err := strconv.ParseFloat(f[i], 64); err != nil {
					t.Errorf("value %q: %q", f[i], l)
				}
			}
		case strings.HasPrefix(l, "Unit "):
		default:
			k, _, ok := strings.Cut(l, ": ")
			if !ok || k == "" || strings.ContainsAny(k, " \t") || strings.ToLower(k) != k {
				t.Errorf("neither a result nor a configuration line: %q", l)
			}
		}
	}
	if results != 12+8 {
		t.Errorf("%d result lines, want 20", results)
	}
	for _, want := range []string{"goos: linux\n", "goarch: amd64\n", "pkg: rdmabench\n", "device: rxe0\n", "device: rxe1\n",
		"BenchmarkRDMA/op=send/mode=lat/size=2 2000 ", " p50-ns ", " MB/s ", "Unit MB/s better=higher\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "p99.99-ns") {
		t.Error("n/a p99.99 written")
	}
}

func TestParseMaxRegress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]float64
		err  string // part of the error; "" for none
	}{
		{"p99=10%,bw=5%", map[string]float64{"p99": 0.10, "bw": 0.05}, ""},
		{" p50 = 2.5% , p99.9=20% ,max=100%", map[string]float64{"p50": 0.025, "p99_9": 0.20, "max": 1}, ""},
		{"p99_99=0%,mpps=1%,mean=3%,p90=4%", map[string]float64{"p99_99": 0, "mpps": 0.01, "mean": 0.03, "p90": 0.04}, ""},
		{"P99=10%", map[string]float64{"p99": 0.10}, ""},
		{"", nil, "empty"},
		{"p99", nil, `entry "p99"`},
		{"p99=10", nil, `entry "p99=10": limit "10" needs a % sign`},
		{"p99=10%,p100=5%", nil, `entry "p100=5%": metric "p100" unknown`},
		{"p99.999=10%", map[string]float64{"p99_999": 0.10}, ""},
		{"p99=ten%", nil, `entry "p99=ten%"`},
		{"p99=-1%", nil, `entry "p99=-1%"`},
		{"p99=10%,p99=20%", nil, `entry "p99=20%": metric p99 given twice`},
		{"p99=10%,", nil, `entry ""`},
		{"bw=100%", nil, `entry "bw=100%": a bw limit must be below 100%`},
		{"=5%", nil, `metric "" unknown`},
	} {
		got, err := ParseMaxRegress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMaxRegress(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseMaxRegress(%q): %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("ParseMaxRegress(%q) = %v, want %v", tc.in, got, tc.want)
		}
		for k, v := range tc.want {
			if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-12 {
				t.Errorf("ParseMaxRegress(%q)[%s] = %v, want %v", tc.in, k, g, v)
			}
		}
	}
}

func TestParseMetrics(t *testing.T) {
	got, err := ParseMetrics("p99.9, p50,bw,p99_9,MAX")
	if err != nil || !reflect.DeepEqual(got, []string{"p99_9", "p50", "bw", "max"}) {
		t.Errorf("ParseMetrics = %q, %v", got, err)
	}
	if got, err := ParseMetrics(""); got != nil || err != nil {
		t.Errorf("ParseMetrics(\"\") = %q, %v, want the defaults (nil)", got, err)
	}
	if _, err := ParseMetrics("p50,pfoo"); err == nil || !strings.Contains(err.Error(), `"pfoo"`) {
		t.Errorf("ParseMetrics(pfoo) error %v", err)
	}
}

// scaled returns a copy of doc whose results pass through f.
func scaled(doc *result.Document, f func(r *result.Result)) *result.Document {
	d := *doc
	d.Results = append([]result.Result(nil), doc.Results...)
	for i := range d.Results {
		f(&d.Results[i])
	}
	return &d
}

func scaleNanos(n *result.Nanos, k float64) { n.NS *= k }

func TestGateInjectedRegression(t *testing.T) {
	base := compareDocs(t, "a.json")[0]
	limits, err := ParseMaxRegress("p99=10%,bw=5%")
	if err != nil {
		t.Fatal(err)
	}
	// A 20 % p99 regression in send lat 2B only.
	cur := scaled(base, func(r *result.Result) {
		if r.Op == "send" && r.Mode == "lat" && r.SizeBytes == 2 {
			scaleNanos(&r.Latency.P99, 1.2)
		}
	})
	g := Gate(base, cur, limits)
	if len(g.Regressions) != 1 {
		t.Fatalf("%d regressions, want 1: %v", len(g.Regressions), g.Regressions)
	}
	r := g.Regressions[0]
	if r.Test != (result.Key{Op: "send", Mode: "lat", SizeBytes: 2}) || r.Metric != "p99" || math.Abs(r.Change-0.2) > 1e-9 || r.Limit != 0.10 {
		t.Errorf("regression %+v", r)
	}
	if want := "send lat 2B: p99 77.38 us -> 92.85 us (+20.0% > 10%)"; r.String() != want {
		t.Errorf("got  %q\nwant %q", r.String(), want)
	}
	var re *RegressionError
	if err := g.Err(); !errors.As(err, &re) || len(re.Regressions) != 1 {
		t.Errorf("Err() = %v, want a *RegressionError with 1 regression", err)
	} else if want := "1 regression: send lat 2B p99 +20.0%"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// 12 tests; p99 of the 6 lat tests (bw tests have too few completion
	// samples for p99) and bw of the 6 bw tests.
	if g.Tests != 12 || g.Checked != 12 {
		t.Errorf("tests %d, checked %d; want 12, 12", g.Tests, g.Checked)
	}
	if n := countPrefix(g.Notes, "send bw 2B: p99 not checked (n/a in both runs)"); n != 1 {
		t.Errorf("notes %q lack the n/a skip of send bw 2B p99", g.Notes)
	}
}

func TestGateWithinLimits(t *testing.T) {
	base := compareDocs(t, "a.json")[0]
	limits := map[string]float64{"p50": 0.10, "p99": 0.10, "p99_9": 0.10, "max": 0.10, "mean": 0.10, "bw": 0.05, "mpps": 0.05}
	// Every latency 9 % worse, every rate 4 % lower: within the limits.
	cur := scaled(base, func(r *result.Result) {
		l := &r.Latency
		for _, n := range []*result.Nanos{&l.P50, &l.P90, &l.P99, &l.P99_9, &l.P99_99} {
			scaleNanos(n, 1.09)
		}
		l.Mean *= 1.09
		l.Max *= 1.09
		r.Bandwidth.MBPerSec *= 0.96
		r.Bandwidth.Mpps *= 0.96
	})
	g := Gate(base, cur, limits)
	if len(g.Regressions) != 0 || g.Err() != nil {
		t.Errorf("regressions within the limits: %v", g.Regressions)
	}
	if g.Checked == 0 {
		t.Error("nothing checked")
	}
	// Improvements never regress.
	better := scaled(base, func(r *result.Result) {
		scaleNanos(&r.Latency.P99, 0.5)
		r.Bandwidth.MBPerSec *= 2
	})
	if g := Gate(base, better, limits); len(g.Regressions) != 0 {
		t.Errorf("improvements flagged: %v", g.Regressions)
	}
}

func TestGateBandwidthAndMissing(t *testing.T) {
	base := compareDocs(t, "a.json")[0]
	cur := compareDocs(t, "c.json")[0] // b.json without read tests
	cur = scaled(cur, func(r *result.Result) {
		if r.Op == "write" && r.Mode == "bw" && r.SizeBytes == 4096 {
			r.Bandwidth.MBPerSec = base.Results[9].Bandwidth.MBPerSec * 0.90
		}
	})
	if k := result.KeyOf(&base.Results[9]); k.String() != "write bw 4K" {
		t.Fatalf("fixture order changed: result 9 is %s", k)
	}
	g := Gate(base, cur, map[string]float64{"bw": 0.05})
	var found bool
	for _, r := range g.Regressions {
		if r.Test.String() == "write bw 4K" {
			found = true
			if math.Abs(r.Change+0.10) > 1e-9 {
				t.Errorf("change %v, want -0.10", r.Change)
			}
			if want := "(-10.0% < -5%)"; !strings.HasSuffix(r.Format(result.UnitMB), want) {
				t.Errorf("%q lacks %q", r.Format(result.UnitMB), want)
			}
		}
	}
	if !found {
		t.Errorf("no bw regression for write bw 4K: %v", g.Regressions)
	}
	if countPrefix(g.Notes, "not compared: read ") != 4 {
		t.Errorf("notes %q: want the 4 read tests not compared", g.Notes)
	}
	if g.Tests != 8 {
		t.Errorf("tests %d, want 8", g.Tests)
	}
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestCompareTableSplit: six runs do not fit 120 columns; the table splits
// into parts that do, each with the test, metric and first run's columns,
// and --wide (width 0) keeps one table.
func TestCompareTableSplit(t *testing.T) {
	var docs []*result.Document
	var names []string
	for i := range 6 {
		d, err := result.ReadJSONFile("testdata/a.json")
		if err != nil {
			t.Fatal(err)
		}
		docs, names = append(docs, d), append(names, fmt.Sprintf("run%d.json", i))
	}
	var b bytes.Buffer
	if err := Compare(docs, names).WriteTable(&b, []string{"p50"}, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, " test "); n != 2 {
		t.Errorf("%d tables, want 2:\n%s", n, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > report.Width {
			t.Errorf("%d columns: %s", len(l), l)
		}
		if strings.HasPrefix(l, " test ") && !strings.Contains(l, "run0.json") {
			t.Errorf("a part without the first run: %s", l)
		}
	}
	b.Reset()
	if err := Compare(docs, names).WriteTable(&b, []string{"p50"}, result.UnitMiB, 0); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), " test "); n != 1 || !strings.Contains(b.String(), "run5.json") {
		t.Errorf("--wide: %d tables, want 1:\n%s", n, b.String())
	}
}
