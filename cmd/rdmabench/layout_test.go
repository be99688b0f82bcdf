package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// purePackages are the data tools a user runs without rdma-core, and the
// test tools the Makefile builds with CGO_ENABLED=0 for the guest.
var purePackages = []string{"./bench/result", "./bench/proto", "./bench/report", "./bench/compare", "./bench/plot", "./bench/fabric", "./bench/doctor", "./bench/knee",
	"./bench/perftest", "./scripts/faults", "./scripts/meshcheck"}

// moduleRoot is the directory holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

func goTool(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	return g
}

func TestPurePackagesNeedNoCgo(t *testing.T) {
	root, g := moduleRoot(t), goTool(t)
	cmd := exec.Command(g, append([]string{"list", "-deps"}, purePackages...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasSuffix(p, "/verbs") || strings.HasSuffix(p, "/sockeng") {
			t.Errorf("a pure package depends on %s", p)
		}
	}
	build := exec.Command(g, append([]string{"build"}, purePackages...)...)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
}

// TestFileSizes keeps each non-test Go file to one concept's worth of code.
func TestFileSizes(t *testing.T) {
	const limit = 520
	root := moduleRoot(t)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "build" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		n := 0
		for s := bufio.NewScanner(f); s.Scan(); {
			n++
		}
		if n > limit {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines (limit %d): split it by concept", rel, n, limit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
