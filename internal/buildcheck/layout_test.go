package buildcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// moduleRoot is the directory holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..") // internal/buildcheck
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

// TestPurePackagesNeedNoCgo: the packages of the layer table's pure layers
// (the data tools a user runs without rdma-core, the test tools the Makefile
// builds with CGO_ENABLED=0 for the guest) build with CGO_ENABLED=0, the
// experiments' files included. TestLayers checks that none depends on cgo.
func TestPurePackagesNeedNoCgo(t *testing.T) {
	root, g := moduleRoot(t), goTool(t)
	build := exec.Command(g, append([]string{"build", "-tags", "experiment"}, purePackages()...)...)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
}
