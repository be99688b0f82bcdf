// Package docs holds the project's documentation and the test that keeps its code blocks
// true: every fenced block of README.md and docs/*.md is run, compared or checked, by the
// kind its info string names (see Classify in blocks_test.go, and docs/development.md).
package docs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// repoRoot is the repository's top directory, seen from this package's directory.
const repoRoot = ".."

// hostFixtures are the files a host block finds in its working directory: name there →
// source in the repository (result documents from real guest runs).
var hostFixtures = map[string]string{
	"a.json":               "bench/plot/testdata/a.json",
	"b.json":               "bench/plot/testdata/b.json",
	"c.json":               "bench/compare/testdata/c.json",
	"base.json":            "bench/plot/testdata/a.json",
	"new.json":             "bench/plot/testdata/b.json",
	"sweep.json":           "bench/plot/testdata/a.json",
	"roce.json":            "bench/fabric/testdata/roce.json",
	"iwarp.json":           "bench/fabric/testdata/iwarp.json",
	"tcp.json":             "bench/fabric/testdata/tcp.json",
	"build/demo/demo.json": "bench/plot/testdata/a.json",
	// five SEND latency runs of 3,000 round trips (--repeat 5), and a copy
	// with every run's p99 raised 30 %
	"repeat.json":         "bench/compare/testdata/repeat5.json",
	"repeat-p99x1.3.json": "bench/compare/testdata/repeat5-p99x1.3.json",
}

// allBlocks reads every Markdown file the test covers.
func allBlocks(t *testing.T) []Block {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(repoRoot, "README.md")}, files...)
	var all []Block
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, f)
		bs, err := Parse(rel, string(b))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, bs...)
	}
	return all
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// rdmabenchDir returns a directory holding the rdmabench binary: $RDMABENCH_BIN's (make
// unit sets it to build/rdmabench), else a fresh build.
func rdmabenchDir(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv("RDMABENCH_BIN"); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				binErr = err
				return
			}
			if filepath.Base(abs) != "rdmabench" {
				binErr = fmt.Errorf("RDMABENCH_BIN=%s: the binary must be named rdmabench", p)
				return
			}
			binDir = filepath.Dir(abs)
			return
		}
		dir, err := os.MkdirTemp("", "docs-bin-")
		if err != nil {
			binErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "rdmabench"), "./cmd/rdmabench")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/rdmabench: %v\n%s", err, out)
			return
		}
		binDir = dir
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// hostWorkdir makes a working directory with the fixtures.
func hostWorkdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range hostFixtures {
		b, err := os.ReadFile(filepath.Join(repoRoot, src))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runHost runs a host block with bash -e in a fresh working directory; it returns the
// combined output and the exit code.
func runHost(t *testing.T, b Block) (string, int) {
	t.Helper()
	dir := hostWorkdir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", b.Body) // no pipefail: `rdmabench --help | head` may end in SIGPIPE, as in a shell
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+rdmabenchDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out after 60 s\n%s", b.Pos(), out)
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", b.Pos(), err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// runGo builds a `go run` block as a program of this module and runs it in a fresh
// working directory with the fixtures.
func runGo(t *testing.T, b Block) (string, int) {
	t.Helper()
	src, err := os.MkdirTemp(".", "_snippet") // inside the module; "_" keeps it out of ./...
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(b.Body), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "snippet")
	build := exec.Command("go", "build", "-o", bin, "./"+filepath.Base(src))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: go build: %v\n%s", b.Pos(), err, out)
	}
	cmd := exec.Command(bin)
	cmd.Dir = hostWorkdir(t)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", b.Pos(), err)
	}
	return string(out), code
}

// TestDocBlocks runs every block that can run on this host, checks the output samples
// that follow them, and checks the syntax and the rdmabench flags of every other block.
// In the bed (go test -exec build/vmexec ./docs) it runs the blocks that need RDMA
// instead, and checks their samples, numbers masked (Mask); the others ran on the host.
func TestDocBlocks(t *testing.T) {
	blocks := allBlocks(t)
	if len(blocks) == 0 {
		t.Fatal("no code blocks found")
	}
	guest := vmtest.InGuest()
	var rdma rdmaRunner
	kinds := map[Kind]int{}
	var prev *Block
	var prevOut string
	prevOK := false // the block before ran here and passed
	for i := range blocks {
		b := blocks[i]
		kind, err := Classify(b)
		if err != nil {
			t.Errorf("%v", err)
			prev = nil
			continue
		}
		kinds[kind]++
		if kind != KindOutput {
			prevOK = false
		}
		if guest && !forGuest(kind, prev, b) {
			// the host's run of this package (make unit) checks it
			prev = &blocks[i]
			continue
		}
		t.Run(b.Pos(), func(t *testing.T) {
			switch kind {
			case KindHost, KindGo:
				if guest {
					t.Skipf("%s runs on the host (go test ./docs)", b.Pos())
				}
				var out string
				var code int
				if kind == KindHost {
					checkShell(t, b, false) // it runs: its flags are proved or refused by rdmabench itself
					out, code = runHost(t, b)
				} else {
					out, code = runGo(t, b)
				}
				if want := b.Exit(); code != want {
					t.Errorf("%s: exit %d, want %d; output:\n%s", b.Pos(), code, want, out)
				}
				prevOut, prevOK = out, true
			case KindGuest:
				if !guest {
					checkShell(t, b, true)
					skipRDMABlock(t, b)
				}
				prevOut, prevOK = rdma.run(t, b), true
			case KindNoRun:
				if guest {
					t.Skipf("%s: checked on the host (go test ./docs)", b.Pos())
				}
				if b.Lang == "sh" || b.Lang == "bash" {
					checkShell(t, b, true)
				}
			case KindOutput:
				switch {
				case prev == nil || (prev.File != b.File):
					t.Errorf("%s: a ```text output block must follow the block whose output it shows", b.Pos())
				case mustKind(*prev) == KindHost || mustKind(*prev) == KindGo:
					if guest {
						t.Skipf("%s: checked on the host (go test ./docs)", b.Pos())
					}
					if !prevOK {
						t.Skipf("%s: %s did not pass", b.Pos(), prev.Pos())
					}
					for _, miss := range MissingLines(b.Body, prevOut, false) {
						t.Errorf("%s: not in the output of %s: %q\noutput:\n%s", b.Pos(), prev.Pos(), miss, prevOut)
					}
				case mustKind(*prev) == KindGuest:
					if !guest {
						t.Skipf("%s: the output of %s, which needs RDMA: checked in the bed", b.Pos(), prev.Pos())
					}
					if !prevOK {
						t.Skipf("%s: %s did not pass", b.Pos(), prev.Pos())
					}
					for _, miss := range MissingLines(b.Body, prevOut, true) {
						t.Errorf("%s: not in the output of %s (numbers masked): %q\noutput:\n%s", b.Pos(), prev.Pos(), miss, prevOut)
					}
				default:
					t.Errorf("%s: a ```text output block must follow a block that runs (host, rdma or go run), not %s", b.Pos(), prev.Pos())
				}
			}
		})
		prev = &blocks[i]
	}
	t.Logf("%d blocks: %d on the host, %d Go programs, %d need RDMA, %d output samples, %d not run (syntax and flags checked)",
		len(blocks), kinds[KindHost], kinds[KindGo], kinds[KindGuest], kinds[KindOutput], kinds[KindNoRun])
}

// forGuest reports whether block b, of kind kind after block prev, is
// checked in the bed: the blocks that need RDMA and the output samples that
// follow them. The host's run checks every other block.
func forGuest(kind Kind, prev *Block, b Block) bool {
	return kind == KindGuest || (kind == KindOutput && prev != nil && prev.File == b.File && mustKind(*prev) == KindGuest)
}

func mustKind(b Block) Kind {
	k, _ := Classify(b)
	return k
}

var (
	helpMu    sync.Mutex
	helpCache = map[string]string{}
)

// help returns `rdmabench SUB --help`, which must succeed.
func help(t *testing.T, sub string) (string, error) {
	t.Helper()
	helpMu.Lock()
	defer helpMu.Unlock()
	if h, ok := helpCache[sub]; ok {
		return h, nil
	}
	cmd := exec.Command(filepath.Join(rdmabenchDir(t), "rdmabench"), sub, "--help")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("rdmabench %s --help: %v\n%s", sub, err, out)
	}
	helpCache[sub] = string(out)
	return string(out), nil
}

var makeTarget = regexp.MustCompile(`(?:^|\s)make\s+([a-z][a-z0-9-]*)`)

// checkShell checks a shell block without running it: bash parses it, the rdmabench
// subcommands and flags it uses exist (their --help lists them; with flags), the make
// targets it names are in the Makefile, and the scripts it names exist.
func checkShell(t *testing.T, b Block, flags bool) {
	t.Helper()
	if out, err := exec.Command("bash", "-n", "-c", b.Body).CombinedOutput(); err != nil {
		t.Errorf("%s: bash -n: %v\n%s", b.Pos(), err, out)
	}
	for _, c := range Commands(b.Body) {
		if !flags {
			break
		}
		h, err := help(t, c.Sub)
		if err != nil {
			t.Errorf("%s: %v", b.Pos(), err)
			continue
		}
		for _, f := range c.Flags {
			if !HelpHasFlag(h, f) {
				t.Errorf("%s: `rdmabench %s --help` does not list %s", b.Pos(), c.Sub, f)
			}
		}
	}
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range makeTarget.FindAllStringSubmatch(StripComments(b.Body), -1) {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `:`).Match(mk) {
			t.Errorf("%s: the Makefile has no target %q", b.Pos(), m[1])
		}
	}
	for _, s := range regexp.MustCompile(`scripts/[A-Za-z0-9_.-]+\.sh`).FindAllString(StripComments(b.Body), -1) {
		if _, err := os.Stat(filepath.Join(repoRoot, s)); err != nil {
			t.Errorf("%s: %s: %v", b.Pos(), s, err)
		}
	}
}

// TestContributorCommands keeps the README's two contributor commands true: `make demo`
// and `make test` are in a README block, both are Makefile targets (checkShell), and CI
// (.ci/run) runs `make test`.
func TestContributorCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Parse("README.md", string(readme))
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, b := range bs {
		code.WriteString(b.Body)
	}
	for _, c := range []string{"make demo", "make test"} {
		if !strings.Contains(code.String(), c) {
			t.Errorf("README.md: no code block has %q", c)
		}
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s*make test\s*$`).Match(ci) {
		t.Errorf(".ci/run does not run `make test`:\n%s", ci)
	}
}

// TestReadmeLength keeps the README a front door (issue 14: about 150 lines).
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 170 {
		t.Errorf("README.md has %d lines; keep it to about 150 and move the rest to docs/", n)
	}
}
