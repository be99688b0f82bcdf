package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinIsReadAsItsKind: a document on stdin is read once and named by
// its kind as a file is: a mesh document compares beside another, a
// cliffs document plots as its own kind, and a result document is still
// a result document.
func TestStdinIsReadAsItsKind(t *testing.T) {
	const mesh = "../../bench/result/testdata/mesh_tcp.json"
	const cliffs = "../../bench/result/resulttest/testdata/cliffs.json"
	dir := t.TempDir()
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{mesh, []string{"compare", "-", mesh}, "pair vm(1)→vm(2):"},
		{mesh, []string{"compare", "--baseline", mesh, "-"}, "no regressions ("},
		{mesh, []string{"plot", "-o", filepath.Join(dir, "heat.svg"), "-"}, "wrote "},
		{cliffs, []string{"plot", "-o", filepath.Join(dir, "cliffs.svg"), "-"}, "wrote "},
		{demoResult, []string{"report", "-"}, "RoCE rxe0 (rdma_rxe)"},
	} {
		f, err := os.Open(c.stdin)
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = f
		code, out := runCLI(c.args...)
		os.Stdin = old
		f.Close()
		if code != exitOK || !strings.Contains(out, c.want) {
			t.Errorf("%s < %s: exit %d, output lacks %q:\n%s", strings.Join(c.args, " "), filepath.Base(c.stdin), code, c.want, out)
		}
	}
}
