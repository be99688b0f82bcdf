package compare

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestJudge: the gate's rules, in their order, on reports made by hand:
// which verdict each outcome is, with which error, and which closing
// lines it writes.
func TestJudge(t *testing.T) {
	key := result.Key{Op: result.OpSend, Mode: result.ModeLat, SizeBytes: 2}
	reg := Regression{Test: key, Metric: MetricP99, Base: 10, New: 20, Change: 1, Limit: 0.1}
	under := Detectable{Test: key, Metric: MetricP99, BaseRuns: 5, NewRuns: 5, Change: 0.5, Limit: 0.1, Alpha: 0.05, Power: 0.8}
	seen := Detectable{Test: key, Metric: MetricP99, BaseRuns: 5, NewRuns: 5, Change: 0.05, Limit: 0.1, Alpha: 0.05, Power: 0.8}
	ok := GateReport{Tests: 2, BaseTests: 2, Checked: 4}
	with := func(f func(*GateReport)) GateReport {
		g := ok
		f(&g)
		return g
	}
	limits := GateConfig{MaxRegress: "p99=10%"}
	counters := GateConfig{MaxRegress: "p99=10%", Counters: map[string]int64{"retransmissions": 0}, MaxCounter: "retransmissions=0"}
	subset := GateConfig{MaxRegress: "p99=10%", Subset: true}
	power := GateConfig{MaxRegress: "p99=10%", RequirePower: true}
	var (
		regErr   *RegressionError
		incErr   *IncompleteError
		tellErr  *CannotTellError
		powerErr *PowerError
	)
	for _, c := range []struct {
		name     string
		g        GateReport
		c        GateConfig
		markdown bool
		verdict  Verdict
		errAs    any    // a pointer to the error type wanted, nil for any
		err      string // in the error; "" for none
		out      string // the lines written
	}{
		{"clean", ok, limits, false, Pass, nil, "", "no regressions (2 tests, 4 metrics checked)\n"},
		{"clean, markdown", ok, limits, true, Pass, nil, "", "- no regressions (2 tests, 4 metrics checked)\n"},
		{"a regression", with(func(g *GateReport) { g.Regressions = []Regression{reg} }), limits, false, Fail, &regErr, "1 regression: send lat 2B p99 +100.0%", ""},
		{"a counter past its limit", with(func(g *GateReport) { g.Counters = []CounterExcess{{Test: key, Name: "retransmissions", Value: 3}} }), counters, false, Fail, &regErr, "retransmissions 3 > 0", ""},
		{"missing tests", with(func(g *GateReport) { g.Missing, g.BaseTests = []result.Key{key}, 3 }), limits, false, Fail, &incErr, "lacks 1 of the baseline's 3 tests", ""},
		{"a partial run", with(func(g *GateReport) { g.Partial = true }), limits, false, Fail, &incErr, "the new run is partial", ""},
		{"a regression before missing tests", with(func(g *GateReport) { g.Regressions, g.Missing = []Regression{reg}, []result.Key{key} }), limits, false, Fail, &regErr, "", ""},
		{"missing tests under --subset", with(func(g *GateReport) { g.Missing, g.BaseTests = []result.Key{key}, 3 }), subset, false, Pass, nil, "",
			"note: --subset: 2 of the baseline's 3 tests gated (partial new run: false)\nno regressions (2 tests, 4 metrics checked)\n"},
		{"no test in both", GateReport{}, limits, false, Fail, nil, "no test is in both base.json and new.json: nothing to gate", ""},
		{"no test in both under --subset", GateReport{Missing: []result.Key{key}, BaseTests: 1}, subset, true, Fail, nil, "nothing to gate",
			"- note: --subset: 0 of the baseline's 1 tests gated (partial new run: false)\n"},
		{"a limit n/a in both runs", with(func(g *GateReport) { g.Unjudged = []string{"p99.9"} }), limits, false, Blind, &tellErr, "cannot tell: p99.9 n/a", ""},
		{"a regression before cannot tell", with(func(g *GateReport) { g.Regressions, g.Unjudged = []Regression{reg}, []string{"p99.9"} }), limits, false, Fail, &regErr, "", ""},
		{"nothing checked", with(func(g *GateReport) { g.Checked = 0 }), limits, false, Fail, nil, `none of the metrics in --max-regress "p99=10%" could be checked`, ""},
		{"no counter checked", ok, counters, false, Fail, nil, `none of the counter limits in --max-counter "retransmissions=0" could be checked: new.json has no port counters`, ""},
		{"counters checked", with(func(g *GateReport) { g.CountersChecked = 6 }), counters, false, Pass, nil, "", "no regressions (2 tests, 4 metrics checked, 6 counter limits checked)\n"},
		{"underpowered passes", with(func(g *GateReport) { g.Detectable = []Detectable{under, seen} }), limits, false, Pass, nil, "",
			"no regressions (2 tests, 4 metrics checked; 1 of them underpowered, see UNDERPOWERED above)\n"},
		{"underpowered is blind under --require-power", with(func(g *GateReport) { g.Detectable = []Detectable{under, seen} }), power, false, Blind, &powerErr, "send lat 2B p99 detects +50.0% > 10%",
			"no regressions (2 tests, 4 metrics checked; 1 of them underpowered, see UNDERPOWERED above)\n"},
		{"single runs are blind under --require-power", with(func(g *GateReport) { g.SingleRun = []result.Key{key} }), power, false, Blind, &powerErr, "send lat 2B single runs",
			"no regressions (2 tests, 4 metrics checked)\n"},
		{"an estimate missing is blind under --require-power", with(func(g *GateReport) { g.Unestimated = []string{"send lat 2B p99"} }), power, false, Blind, &powerErr, "send lat 2B p99 not estimated",
			"no regressions (2 tests, 4 metrics checked)\n"},
		{"a regression before --require-power", with(func(g *GateReport) { g.Regressions, g.SingleRun = []Regression{reg}, []result.Key{key} }), power, false, Fail, &regErr, "", ""},
		{"power enough under --require-power", with(func(g *GateReport) { g.Detectable = []Detectable{seen} }), power, false, Pass, nil, "", "no regressions (2 tests, 4 metrics checked)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bullet := ""
			if c.markdown {
				bullet = "- "
			}
			var out bytes.Buffer
			v, err := c.g.judge(&out, c.c, [2]string{"base.json", "new.json"}, bullet)
			if v != c.verdict || (err == nil) != (v == Pass) {
				t.Errorf("verdict %v, %v; want %v", v, err, c.verdict)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("error %v, want %q in it", err, c.err)
			}
			if c.errAs != nil && !errors.As(err, c.errAs) {
				t.Errorf("error %v (%T), want a %T", err, err, c.errAs)
			}
			if out.String() != c.out {
				t.Errorf("unexpected lines:\n- want: %q\n-  got: %q", c.out, out.String())
			}
		})
	}
}

// TestJudgeMesh: the mesh gate fails on a regressed, failed or less fair
// pair, and on nothing checked; else it passes.
func TestJudgeMesh(t *testing.T) {
	var mre *MeshRegressionError
	for _, c := range []struct {
		name    string
		g       MeshGateReport
		verdict Verdict
		err     string
		out     string
	}{
		{"clean", MeshGateReport{Pairs: 3, Checked: 6}, Pass, "", "no regressions (3 pairs, 6 metrics checked)\n"},
		{"a failed pair", MeshGateReport{Pairs: 3, Checked: 6, Failed: []string{"a(0)→b(1)"}}, Fail, "1 pair regressions: a(0)→b(1) failed", ""},
		{"less fair", MeshGateReport{Pairs: 3, Checked: 6, Fairness: []FairnessRegression{{Change: -0.5}}}, Fail, "fairness -50.0%", ""},
		{"nothing checked", MeshGateReport{Pairs: 3}, Fail, "no pair metric of new.json could be checked against base.json", ""},
	} {
		var out bytes.Buffer
		v, err := c.g.judge(&out, [2]string{"base.json", "new.json"})
		if v != c.verdict || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) || out.String() != c.out {
			t.Errorf("%s: %v, %v, %q; want %v, %q, %q", c.name, v, err, out.String(), c.verdict, c.err, c.out)
		}
		if c.name != "nothing checked" && err != nil && !errors.As(err, &mre) {
			t.Errorf("%s: %T, want a *MeshRegressionError", c.name, err)
		}
	}
}

// TestFiles: the comparison of files whole: which verdict the files and
// the options make, with which error.
func TestFiles(t *testing.T) {
	const (
		a, b   = "testdata/a.json", "testdata/b.json"
		r5, up = "testdata/repeat5.json", "testdata/repeat5-p99x1.3.json"
		mesh   = "../result/testdata/mesh_tcp.json"
		cliffs = "../result/resulttest/testdata/cliffs.json"
	)
	missing := filepath.Join(t.TempDir(), "missing.json")
	gate := func(limits string, f func(*GateConfig)) *GateConfig {
		l, err := ParseMaxRegress(limits)
		if err != nil {
			t.Fatal(err)
		}
		g := &GateConfig{Limits: l, MaxRegress: limits, Options: GateOptions{Alpha: DefaultAlpha, Power: DefaultPower}}
		if f != nil {
			f(g)
		}
		return g
	}
	var ie *result.InputError
	for _, c := range []struct {
		name    string
		c       Config
		verdict Verdict
		err     string // in the error
		out     string // in the output
	}{
		{"tables", Config{Paths: []string{a, b}, Format: FormatTable}, Pass, "", "a.json"},
		{"gobench", Config{Paths: []string{a}, Format: FormatGobench}, Pass, "", "BenchmarkRDMA/"},
		{"noise", Config{Paths: []string{r5}, Noise: true, Unit: result.UnitMiB}, Pass, "", ""},
		{"the gate passes", Config{Paths: []string{a, a}, Format: FormatMarkdown, Gate: gate("p99=10%", nil)}, Pass, "", "- no regressions ("},
		{"the gate fails", Config{Paths: []string{a, b}, Format: FormatTable, Gate: gate("p50=1%", nil)}, Fail, "regression", "REGRESSION "},
		{"the gate is blind", Config{Paths: []string{r5, up}, Gate: gate("p99=10%", func(g *GateConfig) { g.RequirePower = true })}, Blind, "cannot see", "UNDERPOWERED"},
		{"a percentile not recorded", Config{Paths: []string{a, b}, Gate: gate("p77=10%", nil)}, Refused, `--max-regress "p77=10%": p77 is not recorded in testdata/a.json and testdata/b.json`, ""},
		{"mesh documents", Config{Paths: []string{mesh, mesh}, Gate: gate("p99=10%", nil)}, Pass, "", "no regressions ("},
		{"mesh beside results", Config{Paths: []string{mesh, a}}, Refused, "1 of 2 files are mesh documents", ""},
		{"mesh as gobench", Config{Paths: []string{mesh}, Format: FormatGobench}, Refused, "not gobench", ""},
		{"mesh under --require-power", Config{Paths: []string{mesh, mesh}, Gate: gate("p99=10%", func(g *GateConfig) { g.RequirePower = true })}, Refused, "not mesh documents", ""},
		{"a cliffs document", Config{Paths: []string{a, cliffs}}, Unreadable, "a cliffs document (rdmabench cliffs --json), where a result document (rdmabench run or loopback --json) was expected", ""},
		{"a missing file", Config{Paths: []string{missing}}, Unreadable, "cannot read ", ""},
		{"a missing file beside mesh", Config{Paths: []string{mesh, missing}}, Refused, "1 of 2 files are mesh documents", ""},
		{"a missing file for noise", Config{Paths: []string{missing}, Noise: true}, Unreadable, "cannot read ", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.c.Unit == "" {
				c.c.Unit = result.UnitMiB
			}
			var out bytes.Buffer
			v, err := Files(&out, c.c)
			switch {
			case v != c.verdict || (err == nil) != (v == Pass):
				t.Errorf("verdict %v, %v; want %v", v, err, c.verdict)
			case c.err != "" && !strings.Contains(err.Error(), c.err):
				t.Errorf("error %v, want %q in it", err, c.err)
			case v == Unreadable && !errors.As(err, &ie):
				t.Errorf("error %v is not a *result.InputError", err)
			case !strings.Contains(out.String(), c.out):
				t.Errorf("output lacks %q:\n%s", c.out, out.String())
			case v == Refused && out.Len() > 0:
				t.Errorf("refused after writing:\n%s", out.String())
			}
		})
	}
}

func TestNames(t *testing.T) {
	got := Names([]string{"a/x.json", "b/x.json", "-", "y.json", "y.json"})
	want := []string{"a/x.json", "b/x.json", "stdin", "y.json", "y.json#2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Names: %q, want %q", got, want)
	}
}
