package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

const demoResult = "../../bench/plot/testdata/a.json" // make demo's 18 tests

// editDoc writes a copy of the document at path, changed by fn, and
// returns its path.
func editDoc(t *testing.T, path, name string, fn func(*result.Document)) string {
	t.Helper()
	doc, err := result.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(doc)
	out := filepath.Join(t.TempDir(), name)
	if err := result.WriteJSONFile(out, doc); err != nil {
		t.Fatal(err)
	}
	return out
}

func runCLI(args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String() + errOut.String()
}

// TestGateRefusesPartialRun: a new run that kept 2 of the baseline's 18
// tests and says partial fails the gate (exit 1, the reason named), unless
// --subset asks for the tests it has.
func TestGateRefusesPartialRun(t *testing.T) {
	partial := editDoc(t, demoResult, "partial.json", func(d *result.Document) {
		d.Results, d.Partial = d.Results[:2], true
	})
	subset := editDoc(t, demoResult, "subset.json", func(d *result.Document) { d.Results = d.Results[:2] })
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"partial", []string{"compare", "--baseline", demoResult, partial}, 1, "the new run is partial"},
		{"missing tests", []string{"compare", "--baseline", demoResult, subset}, 1, "lacks 16 of the baseline's 18 tests: send lat 64K"},
		{"partial with --subset", []string{"compare", "--baseline", demoResult, partial, "--subset"}, 0, "--subset: 2 of the baseline's 18 tests gated"},
		{"subset with --subset", []string{"compare", "--baseline", demoResult, subset, "--subset"}, 0, "no regressions (2 tests"},
		{"whole run", []string{"compare", "--baseline", demoResult, demoResult}, 0, "no regressions (18 tests"},
		{"--subset without --baseline", []string{"compare", demoResult, "--subset"}, 2, "--subset needs --baseline"},
	} {
		if code, out := runCLI(c.args...); code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d (want %d), output lacks %q:\n%s", c.name, code, c.code, c.want, out)
		}
	}
}

// TestGateLimitsThatCannotBeJudged: a --max-regress percentile no document
// records is a usage error (2); a limit n/a in both runs of every test is
// "cannot tell" (9, as --require-power's blind gate), not a regression (1).
func TestGateLimitsThatCannotBeJudged(t *testing.T) {
	noTail := editDoc(t, demoResult, "notail.json", func(d *result.Document) {
		for i := range d.Results {
			d.Results[i].Latency.P99_9, d.Results[i].Latency.P99_99 = result.Nanos{}, result.Nanos{}
			var qs []result.Quantile
			for _, q := range d.Results[i].Latency.Percentiles {
				if q.P < 99.9 {
					qs = append(qs, q)
				}
			}
			d.Results[i].Latency.Percentiles = qs
		}
	})
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unrecorded percentile", []string{"compare", "--baseline", demoResult, demoResult, "--max-regress", "p77=10%"}, 2, "p77 is not recorded"},
		{"n/a on both sides", []string{"compare", "--baseline", noTail, noTail, "--max-regress", "p99.9=10%"}, 9, "cannot tell: p99.9 n/a in both runs"},
		{"n/a on both sides beside a checked limit", []string{"compare", "--baseline", noTail, noTail, "--max-regress", "p99=10%,p99.9=10%"}, 9, "cannot tell: p99.9"},
		{"recorded percentile", []string{"compare", "--baseline", demoResult, demoResult, "--max-regress", "p99.9=10%"}, 0, "no regressions"},
	} {
		if code, out := runCLI(c.args...); code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d (want %d), output lacks %q:\n%s", c.name, code, c.code, c.want, out)
		}
	}
}

// TestReportShowsEveryRun: report given two runs of one fabric shows both,
// a column each, rather than one of them.
func TestReportShowsEveryRun(t *testing.T) {
	const roce = "../../bench/fabric/testdata/roce.json"
	second := editDoc(t, roce, "roce2.json", func(d *result.Document) {
		for i := range d.Results {
			l := &d.Results[i].Latency
			if l.P50.OK {
				l.P50.NS = l.Min // a different second run
			}
		}
	})
	code, out := runCLI("report", roce, second)
	if code != 0 || !strings.Contains(out, "RoCE rxe1 (rdma_rxe) run 1") || !strings.Contains(out, "RoCE rxe1 (rdma_rxe) run 2") {
		t.Fatalf("exit %d, not both runs:\n%s", code, out)
	}
}

// TestReportPlotSaysMissingLines: report --plot promises p50 and p99.9;
// where p99.9 is n/a it says so (on the plot and on stderr).
func TestReportPlotSaysMissingLines(t *testing.T) {
	noTail := editDoc(t, "../../bench/fabric/testdata/roce.json", "notail.json", func(d *result.Document) {
		for i := range d.Results {
			d.Results[i].Latency.P99_9, d.Results[i].Latency.P99_99 = result.Nanos{}, result.Nanos{}
		}
	})
	code, out := runCLI("report", noTail, "--plot", filepath.Join(t.TempDir(), "r.svg"))
	if code != 0 || !strings.Contains(out, "note: --plot: p99.9 of RoCE rxe1 (rdma_rxe) send: n/a at 2B") {
		t.Fatalf("exit %d, the missing p99.9 line unsaid:\n%s", code, out)
	}
}

// TestImportUntrusted: import writes only what perftest printed (no
// num_cpu, software_rdma, port), a gate between a native and an imported
// result names only fields both know, and a table line that is not a
// perftest row is exit 8, named.
func TestImportUntrusted(t *testing.T) {
	const printed = "../../bench/perftest/testdata/perftest-6.06/send_lat.client.txt"
	out := filepath.Join(t.TempDir(), "imported.json")
	if code, msg := runCLI("import", "perftest", printed, "--json", out); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{`"num_cpu"`, `"software_rdma"`, `"port"`, `"device_numa_node"`} {
		if strings.Contains(string(b), absent) {
			t.Errorf("imported document holds %s, which perftest did not print", absent)
		}
	}
	code, msg := runCLI("compare", "--baseline", demoResult, out, "--subset", "--max-regress", "p99=100000%")
	if n := strings.Count(msg, "\n  env "); code != 0 || n > 7 || strings.Contains(msg, "env num_cpu") {
		t.Errorf("native against imported: exit %d, %d environment differences:\n%s", code, n, msg)
	}
	src, err := os.ReadFile(printed)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	i := strings.Index(text, "#bytes")
	j := i + strings.Index(text[i:], "\n") + 1 // the first row
	k := j + strings.Index(text[j:], "\n")
	cut := text[:j] + strings.Join(strings.Fields(text[j:k])[:3], " ") + text[k:]
	bad := filepath.Join(t.TempDir(), "cut.txt")
	if err := os.WriteFile(bad, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := runCLI("import", "perftest", bad); code != exitInput || !strings.Contains(msg, "not a perftest result row") || !strings.Contains(msg, bad) {
		t.Errorf("a row cut short: exit %d\n%s", code, msg)
	}
}
