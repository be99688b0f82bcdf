package buildcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// purePackages are the data tools a user runs without rdma-core, and the
// test tools the Makefile builds with CGO_ENABLED=0 for the guest.
var purePackages = []string{"./bench/result", "./bench/result/schema", "./bench/proto", "./bench/report", "./bench/compare", "./bench/plot", "./bench/fabric", "./bench/doctor", "./bench/knee", "./bench/drain",
	"./bench/perftest", "./bench/perftest/wire", "./bench/spec", "./bench/timeline", "./bench/hostenv", "./bench/auth", "./bench/admit", "./verbs/linkspeed", "./scripts/meshcheck", "./scripts/vsperftest", "./scripts/wirebw", "./internal/exptool/meshcheck", "./internal/exptool/wirebw", "./internal/exptool/losstail", "./scripts/jcheck", "./scripts/dropinagree",
	"./internal/vm", "./internal/vm/proto", "./internal/testutil/vmtest", "./scripts/vmexec"}

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
