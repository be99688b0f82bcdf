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
var purePackages = []string{"./bench/result", "./bench/result/schema", "./bench/proto", "./bench/report", "./bench/compare", "./bench/plot", "./bench/fabric", "./bench/doctor", "./bench/knee", "./bench/drain",
	"./bench/perftest", "./bench/perftest/wire", "./bench/spec", "./bench/hostenv", "./bench/auth", "./bench/admit", "./verbs/linkspeed", "./scripts/faults", "./scripts/meshcheck", "./scripts/vsperftest", "./scripts/wirebw", "./internal/exptool/meshcheck", "./internal/exptool/wirebw", "./internal/exptool/losstail", "./scripts/jcheck", "./scripts/dropinagree"}

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

// walkGoSources calls fn with each non-test Go file under root (not in
// .git, build or testdata), its path relative to root and its lines.
func walkGoSources(t *testing.T, root string, fn func(rel string, lines int)) {
	t.Helper()
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
		rel, _ := filepath.Rel(root, path)
		fn(rel, n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFileSizes keeps each non-test Go file to one concept's worth of code.
func TestFileSizes(t *testing.T) {
	const limit = 520
	walkGoSources(t, moduleRoot(t), func(rel string, n int) {
		if n > limit {
			t.Errorf("%s has %d lines (limit %d): split it by concept", rel, n, limit)
		}
	})
}

// packageLimits bound a package's non-test Go code, lines and files: one
// package is one concept (docs/architecture.md). The root bench package,
// the engine, still holds several concerns and has its own bound, to
// shrink as they move out (bench/spec, bench/hostenv did).
var packageLimits = map[string]struct{ lines, files int }{
	"":      {5000, 30}, // every other package
	"bench": {9500, 48},
}

// TestPackageSizes keeps each package within packageLimits.
func TestPackageSizes(t *testing.T) {
	type size struct{ lines, files int }
	sizes := map[string]size{}
	walkGoSources(t, moduleRoot(t), func(rel string, n int) {
		dir := filepath.Dir(rel)
		s := sizes[dir]
		s.lines += n
		s.files++
		sizes[dir] = s
	})
	if sizes["bench"].files == 0 || sizes["verbs"].files == 0 {
		t.Fatal("found no Go files in bench or verbs")
	}
	for dir, s := range sizes {
		lim, ok := packageLimits[dir]
		if !ok {
			lim = packageLimits[""]
		}
		if s.lines > lim.lines || s.files > lim.files {
			t.Errorf("package %s has %d lines in %d files (limit %d lines, %d files): split it by concept into packages", dir, s.lines, s.files, lim.lines, lim.files)
		}
	}
}
