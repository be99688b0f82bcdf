package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/version"
)

// TestPerftestFlags: perftest's spellings set the rdmabench flags they
// stand for (docs/perftest-flags.md).
func TestPerftestFlags(t *testing.T) {
	for _, c := range []struct {
		args          []string
		sizes, qpType string
		dur           time.Duration
		unit, json    string
	}{
		{args: []string{"-D", "10"}, dur: 10 * time.Second, unit: "MiB", qpType: "rc"},
		{args: []string{"-D", "2.5"}, dur: 2500 * time.Millisecond, unit: "MiB", qpType: "rc"},
		{args: []string{"--duration", "10s"}, dur: 10 * time.Second, unit: "MiB", qpType: "rc"},
		{args: []string{"-D", "500ms"}, dur: 500 * time.Millisecond, unit: "MiB", qpType: "rc"},
		{args: []string{"-a"}, sizes: perftestAllSizes, unit: "MiB", qpType: "rc"},
		{args: []string{"--all"}, sizes: perftestAllSizes, unit: "MiB", qpType: "rc"},
		{args: []string{"-c", "UD"}, unit: "MiB", qpType: "UD"},
		{args: []string{"--connection=UC"}, unit: "MiB", qpType: "UC"},
		{args: []string{"--report_gbits"}, unit: "Gb", qpType: "rc"},
		{args: []string{"--report_gbits", "--unit", "Gb"}, unit: "Gb", qpType: "rc"},
		{args: []string{"--out_json"}, unit: "MiB", json: perftestJSONFile, qpType: "rc"},
		{args: []string{"--out_json", "--out_json_file=r.json"}, unit: "MiB", json: "r.json", qpType: "rc"},
		{args: []string{"-F", "--CPU-freq", "--post_list", "4", "--inline_size", "0", "-H", "--report-histogram"}, unit: "MiB", qpType: "rc"},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetNormalizeFunc(perftestNames)
		tf := addTestFlags(fs)
		ptf := addPerftestFlags(fs)
		unit, jsonPath := fs.String("unit", "MiB", ""), fs.String("json", "", "")
		if err := fs.Parse(c.args); err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if err := ptf.apply(fs, tf, unit, jsonPath); err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if *tf.sizes != c.sizes || *tf.qpType != c.qpType || *tf.dur != c.dur || *unit != c.unit || *jsonPath != c.json {
			t.Errorf("%q: sizes %q qp-type %q duration %v unit %q json %q; want %q %q %v %q %q", c.args,
				*tf.sizes, *tf.qpType, *tf.dur, *unit, *jsonPath, c.sizes, c.qpType, c.dur, c.unit, c.json)
		}
	}
}

// TestPerftestFlagConflicts: a perftest flag that contradicts an rdmabench
// flag is a usage error naming both, before any work.
func TestPerftestFlagConflicts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"loopback", "-a", "--size", "64"}, "-a (all sizes, 2-8M) and --size contradict"},
		{[]string{"loopback", "--report_gbits", "--unit", "MB"}, "--report_gbits and --unit MB contradict"},
		{[]string{"loopback", "--out_json", "--json", "x.json"}, "--out_json (perftest_out.json) and --json x.json contradict"},
		{[]string{"loopback", "--out_json_file", "x.json"}, "add --out_json"},
		{[]string{"run", "127.0.0.1", "-D", "-1"}, "duration -1s"},
		{[]string{"run", "127.0.0.1", "-c", "XRC"}, `QP type "xrc" unknown`},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d (want %d), stderr lacks %q:\n%s", c.args, code, exitUsage, c.want, errOut.String())
		}
	}
}

// TestPerftestHistogramAndJSON: -H prints the latency distribution after
// the tables and --out_json writes the document, whose tool_version is
// the --version identity (the kernel TCP baseline: no RDMA device needed).
func TestPerftestHistogramAndJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	var out, errOut bytes.Buffer
	code := run([]string{"loopback", "--transport", "tcp", "--mode", "lat", "-n", "300", "-H", "-F", "--out_json", "--out_json_file", path}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "send lat 2B: latency distribution (usec)\n Value\tPercentile") {
		t.Errorf("-H printed no distribution:\n%s", out.String())
	}
	doc, err := result.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := version.String(); doc.ToolVersion != want {
		t.Errorf("tool_version %q, want %q", doc.ToolVersion, want)
	}
}

// TestServerPerftestSpellings: perftest's test and report options on
// server (perftest takes them on both sides) are refused before anything
// starts, exit 2, naming the client's flag that takes them.
func TestServerPerftestSpellings(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-a"}, "server -a: the client's option (-a, --all-sizes of 'rdmabench run HOST'"},
		{[]string{"--all"}, "server --all: the client's option (-a, --all-sizes of"},
		{[]string{"-c", "UD"}, "server -c: the client's option (-c, --qp-type of"},
		{[]string{"--connection=UD"}, "server --connection: the client's option (-c, --qp-type of"},
		{[]string{"-D", "10"}, "server -D: the client's option (-D, --duration of"},
		{[]string{"-H"}, "server -H: the client's option (-H, --histogram of"},
		{[]string{"--out_json"}, "server --out_json: the client's option (--out-json of"},
		{[]string{"--report_gbits"}, "server --report_gbits: the client's option (--report-gbits of"},
		{[]string{"--data_validation"}, "server --data_validation: the client's option (--verify of"},
		{[]string{"--op", "write"}, "server --op: the client's option (--op of"},
		{[]string{"--bnid", "x"}, "Did you mean this?\n\t--bind"}, // not run's: the suggestion as before
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"server"}, c.args...)
		if code := run(args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d (want %d), stderr lacks %q:\n%s", args, code, exitUsage, c.want, errOut.String())
		}
	}
}

// TestDataValidation: perftest's --data_validation is --verify wherever
// --verify is (run, loopback, mesh: the test flags).
func TestDataValidation(t *testing.T) {
	for _, args := range [][]string{{"--data_validation"}, {"--data-validation"}, {"--verify"}} {
		fs := flag.NewFlagSet("loopback", flag.ContinueOnError)
		fs.SetNormalizeFunc(perftestNames)
		tf := addTestFlags(fs)
		if err := fs.Parse(args); err != nil || !*tf.verify {
			t.Errorf("%q: verify %v, error %v; want verify on", args, *tf.verify, err)
		}
	}
}
