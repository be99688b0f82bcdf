package main

import (
	"bytes"
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
		{"missing tests", []string{"compare", "--baseline", demoResult, subset}, 1, "lacks 16 of the baseline's 18 tests: send lat 65536B"},
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
