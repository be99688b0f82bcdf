package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// complete is what the shell's completion gets for args: the candidates
// (before the directive line ":N").
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(append([]string{"__complete"}, args...), &out, &errOut); code != exitOK {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errOut.String())
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(l, ":") {
			break
		}
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got
}

// TestCompletionValues: every enum-valued flag completes its values from
// the vocabulary that owns them; a list flag completes its last element;
// import completes its source.
func TestCompletionValues(t *testing.T) {
	ops := append(opNames(), "all")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--op", ""}, ops},
		{[]string{"loopback", "--op", "w"}, []string{"write", "write_imm"}},
		{[]string{"run", "--op", "send,re"}, []string{"send,read"}},
		{[]string{"mesh", "--op", ""}, ops},
		{[]string{"run", "--mode", ""}, result.Modes},
		{[]string{"plot", "--mode", ""}, result.Modes},
		{[]string{"plot", "--kind", ""}, plot.KindArgs()},
		{[]string{"plot", "--kind", "h"}, []string{"heatmap"}},
		{[]string{"plot", "--metric", "p99"}, []string{"p99", "p99_9", "p99_99"}},
		{[]string{"compare", "--format", ""}, []string{"table", "markdown", "gobench"}},
		{[]string{"compare", "--metrics", "p50,m"}, []string{"p50,mean", "p50,max", "p50,mpps"}},
		{[]string{"cliffs", "--figure", "m"}, []string{"mean", "max", "mpps"}},
		{[]string{"import", "perftest", "--show", "t"}, []string{"tables", "table-header"}},
		{[]string{"report", "--format", ""}, []string{"text", "markdown"}},
		{[]string{"run", "--unit", ""}, result.Units},
		{[]string{"compare", "--unit", ""}, result.Units},
		{[]string{"report", "--unit", ""}, result.Units},
		{[]string{"run", "--qp-type", ""}, result.QPTypes},
		{[]string{"loopback", "-c", ""}, result.QPTypes},
		{[]string{"run", "--transport", ""}, result.Transports},
		{[]string{"run", "--schedule", ""}, result.Schedules},
		{[]string{"run", "--mr-mode", ""}, result.MRModes},
		{[]string{"run", "--access", ""}, []string{"seq", "random", "stride:"}},
		{[]string{"run", "--clock", ""}, []string{"auto", "tsc", "monotonic"}},
		{[]string{"run", "--load-op", ""}, []string{"write", "read"}},
		{[]string{"run", "--inline-size", ""}, []string{"auto", "perftest"}},
		{[]string{"cliffs", "--axis", "tx"}, []string{"tx-depth"}},
		{[]string{"isolation", "--attackers", "bw-hog,rnr"}, []string{"bw-hog,rnr-storm"}},
		{[]string{"mesh", "--pattern", ""}, []string{"pairs", "ring", "all-to-one", "bisection"}},
		{[]string{"import", ""}, []string{"perftest"}},
		{[]string{"import", "perftest", "--tool", "ib_write"}, []string{"ib_write_bw", "ib_write_lat"}},
	} {
		if got := complete(t, c.args...); !slices.Equal(got, c.want) {
			t.Errorf("__complete %q = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestEnumFlagsComplete: every flag whose help lists its words has a
// completion, so a new enum flag is not forgotten: the flags docs/flags.md
// gives values are the ones registered.
func TestEnumFlagsComplete(t *testing.T) {
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range root.Commands() {
		for _, name := range enumFlagNames(c) {
			if _, ok := c.GetFlagCompletionFunc(name); !ok {
				t.Errorf("%s --%s: values but no completion", c.Name(), name)
			}
		}
	}
	for _, want := range []struct{ cmd, flag string }{
		{"run", "op"}, {"run", "mode"}, {"run", "qp-type"}, {"run", "unit"}, {"plot", "kind"},
		{"compare", "format"}, {"report", "format"}, {"loopback", "transport"}, {"mesh", "pattern"},
	} {
		c, _, _ := root.Find([]string{want.cmd})
		if _, ok := c.GetFlagCompletionFunc(want.flag); !ok {
			t.Errorf("%s --%s completes nothing", want.cmd, want.flag)
		}
	}
}

// TestPlotPrintsFiles: plot prints each file it writes, and no other; with
// --kind it writes exactly -o (the README's example).
func TestPlotPrintsFiles(t *testing.T) {
	a, b := filepath.Join("..", "..", "bench", "plot", "testdata", "a.json"), filepath.Join("..", "..", "bench", "plot", "testdata", "b.json")
	for _, c := range []struct {
		extra []string
		want  []string
	}{
		{nil, []string{"cmp-percentile.svg", "cmp-size-bw.svg", "cmp-size-latency.svg"}},
		{[]string{"--kind", "percentile"}, []string{"cmp.svg"}},
	} {
		dir := t.TempDir()
		var out, errOut bytes.Buffer
		args := append([]string{"plot", a, b, "-o", filepath.Join(dir, "cmp.svg")}, c.extra...)
		if code := run(args, &out, &errOut); code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
		}
		ents, _ := os.ReadDir(dir)
		var files, printed []string
		for _, e := range ents {
			files = append(files, e.Name())
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			printed = append(printed, filepath.Base(strings.TrimPrefix(l, "wrote ")))
		}
		slices.Sort(printed)
		if !slices.Equal(files, c.want) || !slices.Equal(printed, c.want) {
			t.Errorf("%q: wrote %q, printed %q; want %q", c.extra, files, printed, c.want)
		}
	}
}
