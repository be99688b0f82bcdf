package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestGeneratedDocs: the generated parts of the committed docs are what
// the code generates now; a flag, an exit code or a plot kind added
// without make docs fails here, naming the file and the first line that
// differs.
func TestGeneratedDocs(t *testing.T) {
	root, _ := newRoot(io.Discard, io.Discard)
	for _, p := range docParts {
		if msg := docDrift(t, p, root); msg != "" {
			t.Error(msg)
		}
	}
}

// TestGeneratedDocsCatchNewFlag: a flag added to run without regenerating
// fails TestGeneratedDocs at the line where its row would go.
func TestGeneratedDocsCatchNewFlag(t *testing.T) {
	root, _ := newRoot(io.Discard, io.Discard)
	c, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	c.Flags().Bool("brand-new", false, "a flag nobody documented")
	msg := docDrift(t, docParts[0], root)
	if !strings.Contains(msg, "docs/flags.md:") || !strings.Contains(msg, "generated: | `--brand-new`") {
		t.Errorf("a new flag: %q; want docs/flags.md:LINE and the generated row of --brand-new", msg)
	}
}

// docDrift reads p's committed file and says where its generated part
// differs from what root generates: "docs/FILE:LINE: ..." with both
// lines; "" when it does not.
func docDrift(t *testing.T, p docPart, root *cobra.Command) string {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("..", "..", "docs", p.file))
	if err != nil {
		t.Fatal(err)
	}
	want, err := replacePart(string(old), p.name, p.gen(root))
	if err != nil {
		return fmt.Sprintf("docs/%s: %v", p.file, err)
	}
	n, committed, generated := firstDiff(string(old), want)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("docs/%s:%d: differs from what the code generates (run 'make docs', or "+
		"'go run ./cmd/rdmabench gen-docs docs', and commit the result):\n  committed: %s\n  generated: %s", p.file, n, committed, generated)
}

// TestReplacePart: the part between its markers is replaced, the rest
// kept; missing markers are an error.
func TestReplacePart(t *testing.T) {
	b, e := docMarkers("x")
	for _, c := range []struct {
		in, body, want string
		err            bool
	}{
		{"a\n" + b + "\nold\n" + e + "\nz\n", "new\n", "a\n" + b + "\nnew\n" + e + "\nz\n", false},
		{b + "\n" + e + "\n", "row 1\nrow 2\n", b + "\nrow 1\nrow 2\n" + e + "\n", false},
		{"a\nno markers\n", "new\n", "", true},
		{e + "\n" + b + "\n", "new\n", "", true},
	} {
		got, err := replacePart(c.in, "x", c.body)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("replacePart(%q, %q) = %q, %v; want %q (error %v)", c.in, c.body, got, err, c.want, c.err)
		}
	}
}

// TestFirstDiff: the first differing line, from 1, with both lines.
func TestFirstDiff(t *testing.T) {
	for _, c := range []struct {
		a, b   string
		n      int
		la, lb string
	}{
		{"x\ny\n", "x\ny\n", 0, "", ""},
		{"x\ny\n", "x\nz\n", 2, "y", "z"},
		{"x\n", "x\ny\n", 2, "", "y"},
		{"x\ny", "x", 2, "y", ""},
	} {
		if n, la, lb := firstDiff(c.a, c.b); n != c.n || la != c.la || lb != c.lb {
			t.Errorf("firstDiff(%q, %q) = %d %q %q; want %d %q %q", c.a, c.b, n, la, lb, c.n, c.la, c.lb)
		}
	}
}
