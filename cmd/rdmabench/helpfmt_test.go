package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	flag "github.com/spf13/pflag"
)

// TestHelpNoise: in every command's --help, no boolean shows
// [=true|false], no flag shows two defaults, and no line is wider than the
// width (120 columns off a terminal).
func TestHelpNoise(t *testing.T) {
	t.Setenv("COLUMNS", strconv.Itoa(defaultHelpWidth)) // as off a terminal, even when go test's stdout is one
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	defaults := regexp.MustCompile(`\(default\b`)
	flagLine := regexp.MustCompile(`^  (-\w, )?--|^      --`)
	for _, c := range append(root.Commands(), root) {
		var out bytes.Buffer
		args := []string{c.Name(), "--help"}
		if c == root {
			args = []string{"--help"}
		}
		if code := run(args, &out, &bytes.Buffer{}); code != exitOK {
			continue // help, completion's shells
		}
		help := out.String()
		if strings.Contains(help, "[=true|false]") {
			t.Errorf("%s --help shows [=true|false]", c.Name())
		}
		// One flag's text: its line and the indented lines under it.
		var entries []string
		for _, l := range strings.Split(help, "\n") {
			if len([]rune(l)) > defaultHelpWidth {
				t.Errorf("%s --help: a line of %d columns (> %d): %s", c.Name(), len([]rune(l)), defaultHelpWidth, l)
			}
			switch {
			case flagLine.MatchString(l):
				entries = append(entries, l)
			case strings.HasPrefix(l, "        ") && len(entries) > 0:
				entries[len(entries)-1] += " " + strings.TrimSpace(l)
			}
		}
		for _, e := range entries {
			if n := len(defaults.FindAllString(e, -1)); n > 1 {
				t.Errorf("%s --help: %d defaults in %q", c.Name(), n, e)
			}
		}
	}
}

// TestFlagUsages: the layout of one flag set, wrapped at 60 columns.
func TestFlagUsages(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SortFlags = false
	fs.BoolP("event", "e", false, "sleep on completion channels")
	fs.IntP("gid-index", "x", -1, "GID index (default: auto)")
	fs.Int("port", 18515, "TCP control port")
	fs.String("op", "send", "operations: send, write, read, fetch_add, cmp_swap, write_imm, send_imm, or all")
	got := flagUsages(fs, 60)
	want := "" +
		"  -e, --event           sleep on completion channels\n" +
		"  -x, --gid-index int   GID index (default: auto)\n" +
		"      --port int        TCP control port (default 18515)\n" +
		"      --op string       operations: send, write, read,\n" +
		"                        fetch_add, cmp_swap, write_imm,\n" +
		"                        send_imm, or all (default \"send\")\n"
	if got != want {
		t.Errorf("flagUsages:\n%s\nwant:\n%s", got, want)
	}
}

// TestWrap: lines of at most the width, words kept whole.
func TestWrap(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  []string
	}{
		{"a b c", 20, []string{"a b c"}},
		{"aaaa bbbb cccc dddd eeee ffff", 20, []string{"aaaa bbbb cccc dddd", "eeee ffff"}},
		{"x " + strings.Repeat("y", 30) + " z", 20, []string{"x", strings.Repeat("y", 30), "z"}},
	} {
		if got := wrap(c.text, c.width); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}

// TestManFlags: the man pages' OPTIONS say what --help says: the value's
// name instead of pflag's default, one default, nothing after a boolean.
func TestManFlags(t *testing.T) {
	dir := t.TempDir()
	helpText(t, "gen-man", dir)
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil || len(pages) < 10 {
		t.Fatalf("gen-man wrote %d pages (%v)", len(pages), err)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, `\fB-`) && strings.Contains(l, "=") {
				t.Errorf("%s: %q: a default after the flag's name", filepath.Base(p), l)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "rdmabench-run.1"))
	for _, want := range []string{
		"\\fB-x\\fP, \\fB--gid-index\\fP \\fIint\\fP\n\tGID index (default: auto,",
		"\\fB-p\\fP, \\fB--port\\fP \\fIint\\fP\n\tTCP control port of the server (default 18515)\n",
		"\\fB-e\\fP, \\fB--event\\fP\n\tsleep on completion channels",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("rdmabench-run.1 lacks %q", want)
		}
	}
}

// TestHelpWidth: $COLUMNS, else the terminal's width; a pipe is no
// terminal; never below minHelpWidth.
func TestHelpWidth(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if n := terminalWidth(w); n != 0 {
		t.Errorf("terminalWidth(pipe) = %d, want 0", n)
	}
	for _, c := range []struct {
		columns string
		want    int
	}{{"100", 100}, {"200", 200}, {"10", minHelpWidth}} {
		t.Setenv("COLUMNS", c.columns)
		if got := helpWidth(); got != c.want {
			t.Errorf("COLUMNS=%s: helpWidth() = %d, want %d", c.columns, got, c.want)
		}
	}
}
