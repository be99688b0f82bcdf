package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestCliffsRefusals: every bad value is refused before a device is
// opened (these run on a host without RDMA), naming the value and the
// limit; a ladder point over rdmabench's limit refuses the whole search.
func TestCliffsRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cliffs"}, "cliffs needs --axis"},
		{[]string{"cliffs", "--axis", "colour"}, `--axis "colour" unknown; valid: qps, size, tx-depth, outstanding-reads`},
		{[]string{"cliffs", "--axis", "qps", "-q", "4"}, "--qps is the axis searched"},
		{[]string{"cliffs", "--axis", "size", "-s", "64"}, "--size is the axis searched"},
		{[]string{"cliffs", "--axis", "qps", "--to", "2048"}, "qps 2048: write bw 64B: QPs 2048 out of range 1..1024 (--qps)"},
		{[]string{"cliffs", "--axis", "tx-depth", "--to", "40000"}, "tx_depth 40000: write bw 64B: tx depth 40000 out of range 1..32768"},
		{[]string{"cliffs", "--axis", "qps", "--mode", "lat"}, "--qps"},
		{[]string{"cliffs", "--axis", "qps", "--op", "send,write"}, "cliffs measures one test along the axis"},
		{[]string{"cliffs", "--axis", "qps", "--factor", "1"}, "--factor 1 out of range (1, 16]"},
		{[]string{"cliffs", "--axis", "qps", "--from", "8", "--to", "4"}, "--to 4: must be above --from 8"},
		{[]string{"cliffs", "--axis", "size", "--points", "64,32"}, "--points"},
		{[]string{"cliffs", "--axis", "size", "--points", "64,128", "--from", "8"}, "--points is the whole ladder"},
		{[]string{"cliffs", "--axis", "qps", "--runs", "0"}, "--runs 0 out of range 1..100"},
		{[]string{"cliffs", "--axis", "qps", "--bisect", "21"}, "--bisect 21 out of range 0..20"},
		{[]string{"cliffs", "--axis", "qps", "--min-drop", "120%"}, `--min-drop "120%": want a fraction`},
		{[]string{"cliffs", "--axis", "qps", "--figure", "colour"}, `--figure "colour" unknown`},
		{[]string{"cliffs", "--axis", "size", "--mode", "lat", "--figure", "mpps"}, "--figure mpps is a bandwidth test's figure"},
		{[]string{"cliffs", "--axis", "qps", "--transport", "tcp"}, "cliffs measures RDMA tests"},
		{[]string{"cliffs", "a", "b", "--axis", "qps"}, "cliffs takes at most one argument"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), exitUsage, c.want)
		}
	}
}

// TestPlotCliffs: plot draws a cliffs document by itself (--kind auto) or
// with --kind cliffs, and refuses another kind for it and a result
// document for --kind cliffs.
func TestPlotCliffs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	up := 4
	if err := result.WriteCliffsJSON(p, &result.CliffsDocument{Role: "loopback", Device: "rxe0", Test: "write bw 64B", Axis: "qps",
		Figure: "mpps", FigureUnit: "Mpps", Ladder: []int{1, 2, 4}, Runs: 1, MaxPoints: 3, MinDrop: 0.2, Confidence: 0.95,
		Points: []result.CliffsPoint{{Value: 1, Stage: "ladder", Runs: []float64{1}, Median: 1, Min: 1, Max: 1},
			{Value: 4, Stage: "ladder", Runs: []float64{0.9}, Median: 0.9, Min: 0.9, Max: 0.9}}, NoKneeUpTo: &up}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"plot", p, "-o", filepath.Join(dir, "a.svg")}, {"plot", p, "--kind", "cliffs", "-o", filepath.Join(dir, "b.png")}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || !strings.Contains(out.String(), "wrote ") {
			t.Errorf("%v: exit %d, %s %s", args, code, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.png")); err != nil {
		t.Error(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"plot", p, "--kind", "cdf", "-o", filepath.Join(dir, "c.svg")}, &out, &errb); code != exitUsage ||
		!strings.Contains(errb.String(), "its plot is --kind cliffs") {
		t.Errorf("cdf of a cliffs document: exit %d, %s", code, errb.String())
	}
}
