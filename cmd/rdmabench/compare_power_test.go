package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Real repeated runs from the SoftRoCE guest (rdmabench loopback --op send
// --mode lat -n 3000 --repeat 5 --json): the runs' p99 spread with a CV of
// 57 %, and a copy with every run's p99 raised 30 %
// (bench/compare/power_test.go checks how it was made).
const (
	fixtureRepeat    = "../../bench/compare/testdata/repeat5.json"
	fixtureRepeatP99 = "../../bench/compare/testdata/repeat5-p99x1.3.json"
)

// TestRequirePower: the noisy gate that passed silently now names the
// figure it cannot see; --require-power turns that into exitBlind, a
// regression still wins with exitFail, and single runs are blind too.
func TestRequirePower(t *testing.T) {
	single := filepath.Join(t.TempDir(), "single.json")
	doc, err := result.ReadJSONFile(fixtureRepeat)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Results {
		doc.Results[i].Runs, doc.Results[i].Repeat = nil, nil
	}
	if err := result.WriteJSONFile(single, doc); err != nil {
		t.Fatal(err)
	}
	under := "UNDERPOWERED send lat 2B: p99: smallest detectable change +273.8% > limit 10% (27.4x; alpha 0.05, power 80%, 5 vs 5 runs)"
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string // in stdout and stderr
	}{
		{"the silent pass names the figure", []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--max-regress", "p99=10%"}, exitOK,
			[]string{"p99 116.80 us -> 151.84 us (+30.0%, p=0.222 ~)", under, "no regressions (1 tests, 1 metrics checked; 1 of them underpowered"}},
		{"--require-power exits with its code", []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--max-regress", "p99=10%", "--require-power"}, exitBlind,
			[]string{under, "rdmabench: the gate cannot see a change of the limits' size (--require-power): send lat 2B p99 detects +273.8% > 10%"}},
		{"markdown carries it", []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--max-regress", "p99=10%", "--format", "markdown"}, exitOK,
			[]string{"- " + under}},
		{"a limit it can see passes", []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--max-regress", "p99=300%", "--require-power"}, exitOK,
			[]string{"send lat 2B: p99 detectable change +273.8% (alpha 0.05, power 80%, 5 vs 5 runs)"}},
		{"a regression wins", []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--max-regress", "p99=10%", "--require-power", "--alpha", "0.25"}, exitFail,
			[]string{"REGRESSION send lat 2B: p99"}},
		{"single runs are blind", []string{"compare", "--baseline", single, single, "--max-regress", "p99=10%", "--require-power"}, exitBlind,
			[]string{"cannot judge noise", "send lat 2B single runs"}},
		{"--power out of range", []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--power", "1"}, exitUsage, []string{"--power 1: want"}},
		{"--require-power needs --baseline", []string{"compare", fixtureRepeat, "--require-power"}, exitUsage, []string{"need --baseline"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(c.args, &out, &errOut)
			all := strings.ReplaceAll(out.String()+errOut.String(), "\n  ", " ") // lines wrapped at 120 columns, joined
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, all)
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

// TestCompareNamesEnvDiffs: the gate names the environment fields that
// differ between the baseline and the new run.
func TestCompareNamesEnvDiffs(t *testing.T) {
	doc, err := result.ReadJSONFile(fixtureRepeat)
	if err != nil {
		t.Fatal(err)
	}
	doc.Env.Kernel, doc.Env.Firmware = "6.1.0-99-amd64", "9.9.9"
	cur := filepath.Join(t.TempDir(), "cur.json")
	if err := result.WriteJSONFile(cur, doc); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"compare", "--baseline", fixtureRepeat, cur, "--max-regress", "p50=50%", "--format", "markdown"}, &out, &errOut)
	for _, w := range []string{"- note: the environments differ in 2 fields (baseline -> new):\n", "\n  - env firmware: \"0.0.0\" -> \"9.9.9\"\n", "\n  - env kernel: \""} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, w, out.String(), errOut.String())
		}
	}
}
