package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// asMainEnv makes the test binary act as rdmabench (TestMain), so that a
// shell can run it under that name: the completion script calls
// 'rdmabench __complete ...'.
const asMainEnv = "RDMABENCH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestHelp: help goes to stdout, lists every command, and each command has
// a synopsis, a one-line summary and examples that start with rdmabench
// (or a launcher running it).
func TestHelp(t *testing.T) {
	top := helpText(t, "--help")
	if head := strings.Join(strings.SplitN(top, "\n", 11)[:10], "\n"); !strings.Contains(head, "Commands:\n  devices ") ||
		!strings.Contains(head, "\n  run ") {
		t.Errorf("the first 10 lines of --help do not list the commands:\n%s", head)
	}
	if h := helpText(t, "help"); h != top {
		t.Errorf("'rdmabench help' differs from --help")
	}
	for _, sc := range subcommands() {
		name := strings.Fields(sc.use)[0]
		if !strings.Contains(top, "\n  "+name+" ") {
			t.Errorf("--help does not list %s:\n%s", name, top)
		}
		if strings.Contains(sc.short, "\n") || sc.short == "" {
			t.Errorf("%s: the short description must be one line: %q", name, sc.short)
		}
		h := helpText(t, "help", name)
		if h2 := helpText(t, name, "--help"); h2 != h {
			t.Errorf("'help %s' and '%s --help' differ", name, name)
		}
		if !strings.Contains(h, "Usage:\n  rdmabench "+sc.use) || !strings.Contains(h, "Examples:\n") {
			t.Errorf("help %s lacks its synopsis or examples:\n%s", name, h)
		}
		for _, ex := range strings.Split(sc.example, "\n") {
			if f := strings.Fields(ex); len(f) == 0 || !slices.Contains(f, "rdmabench") {
				t.Errorf("%s: example %q does not run rdmabench", name, ex)
			}
		}
		if strings.Contains(h, "Exit codes") {
			t.Errorf("help %s repeats the exit code table", name)
		}
	}
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range root.Commands() { // cobra's own commands too
		if c.IsAvailableCommand() && (c.Short == "" || c.Example == "") {
			t.Errorf("%s has no short description or no examples", c.Name())
		}
	}
	if h := helpText(t, "help", "run"); !strings.Contains(h, "--iters") || !strings.Contains(h, "-c, --qp-type") {
		t.Errorf("help run lacks its flags:\n%s", h)
	}
}

// TestExamplesParse: every example command line of every command parses:
// cobra accepts its command and flags (it is run only up to the flags: the
// test replaces the action).
func TestExamplesParse(t *testing.T) {
	for _, sc := range subcommands() {
		for _, ex := range strings.Split(sc.example, "\n") {
			f := strings.Fields(strings.SplitN(ex, "#", 2)[0])
			i := slices.Index(f, "rdmabench")
			args := f[i+1:]
			root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
			cmd, rest, err := root.Find(args)
			if err != nil {
				t.Errorf("%q: %v", ex, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%q: %v", ex, err)
			}
		}
	}
}

// TestVersion: --version and version print the same identity line.
func TestVersion(t *testing.T) {
	v := helpText(t, "--version")
	if v != helpText(t, "version") || !strings.HasPrefix(v, "rdmabench ") || !strings.Contains(v, "(commit ") {
		t.Errorf("--version %q, version %q", v, helpText(t, "version"))
	}
}

// TestBashCompletion sources 'rdmabench completion bash' in bash and
// completes as bash would on Tab: subcommands, and the flags of run.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "rdmabench")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "rdmabench.bash")
	if err := os.WriteFile(script, []byte(helpText(t, "completion", "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	// comp completes the words given, the last one being completed, as
	// bash sets COMP_WORDS and COMP_CWORD on Tab; without the
	// bash-completion package, a minimal _get_comp_words_by_ref.
	const driver = `
if [ -r /usr/share/bash-completion/bash_completion ]; then . /usr/share/bash-completion/bash_completion; fi
if ! declare -F _get_comp_words_by_ref >/dev/null; then
	_get_comp_words_by_ref() { words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; }
fi
. "$1"
compopt() { :; } # bash allows it only inside a completion that Tab started
comp() {
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
	__start_rdmabench
	printf '%s\n' "${COMPREPLY[@]}"
}
case $2 in
sub) comp rdmabench "" ;;
ru) comp rdmabench ru ;;
runflags) comp rdmabench run --it ;;
runall) comp rdmabench run -- ;;
opvalues) comp rdmabench run --op w ;;
kindvalues) comp rdmabench plot a.json --kind "" ;;
importsource) comp rdmabench import "" ;;
esac
`
	complete := func(what string) []string {
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", driver, "driver", script, what)
		cmd.Env = append(os.Environ(), asMainEnv+"=1", "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		if err != nil || errOut.Len() > 0 {
			t.Fatalf("bash completion %s: %v\n%s%s", what, err, out, errOut.String())
		}
		var words []string
		for _, w := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			words = append(words, strings.TrimSpace(w))
		}
		return words
	}
	if got := complete("sub"); !contains(got, "run", "loopback", "server", "devices", "compare", "version", "completion") ||
		contains(got, "gen-man") || contains(got, "gen-docs") {
		t.Errorf("rdmabench <Tab>: %q", got)
	}
	if got := complete("ru"); !slices.Equal(got, []string{"run"}) {
		t.Errorf("rdmabench ru<Tab>: %q, want [run]", got)
	}
	if got := complete("runflags"); !slices.Equal(got, []string{"--iters"}) {
		t.Errorf("rdmabench run --it<Tab>: %q, want [--iters]", got)
	}
	if got := complete("runall"); !contains(got, "--op", "--mode", "--size", "--json", "--qp-type", "--report-gbits") {
		t.Errorf("rdmabench run --<Tab>: %q", got)
	}
	if got := complete("opvalues"); !slices.Equal(got, []string{"write", "write_imm"}) {
		t.Errorf("rdmabench run --op w<Tab>: %q, want [write write_imm]", got)
	}
	if got := complete("kindvalues"); !contains(got, "percentile", "heatmap", "load", "timeline") {
		t.Errorf("rdmabench plot a.json --kind <Tab>: %q", got)
	}
	if got := complete("importsource"); !slices.Equal(got, []string{"perftest"}) {
		t.Errorf("rdmabench import <Tab>: %q, want [perftest]", got)
	}
}

// contains reports whether every one of want is in got.
func contains(got []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestFlagSuggestions: the nearest flag of a mistyped one.
func TestFlagSuggestions(t *testing.T) {
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	runCmd, _, _ := root.Find([]string{"run"})
	for _, c := range []struct{ typed, want string }{
		{"iter", "iters"}, {"szie", "size"}, {"sise", "size"}, {"dur", "duration"}, {"jsno", "json"},
		{"qptype", "qp-type"}, {"frobnicate", ""}, {"x", ""},
	} {
		if got := nearestFlag(runCmd.Flags(), c.typed); got != c.want {
			t.Errorf("--%s: suggests %q, want %q", c.typed, got, c.want)
		}
	}
}

// TestCompletionScripts: zsh and fish get cobra's scripts, which ask
// rdmabench itself (__complete) as bash's does.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"zsh": "#compdef rdmabench", "fish": "complete -c rdmabench"} {
		if s := helpText(t, "completion", shell); !strings.Contains(s, want) || !strings.Contains(s, "__complete") {
			t.Errorf("completion %s lacks %q or __complete", shell, want)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"completion", "tcsh"}, &out, &errOut); code != exitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", code, exitUsage)
	}
}
