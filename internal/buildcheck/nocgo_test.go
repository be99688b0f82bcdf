package buildcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCgoBuildSaysWhy: without cgo the binary does not build, and the one
// error names cgo, CGO_ENABLED and the rdma-core packages (verbs/nocgo.go).
func TestNoCgoBuildSaysWhy(t *testing.T) {
	root, g := moduleRoot(t), goTool(t)
	cmd := exec.Command(g, "build", "-o", filepath.Join(t.TempDir(), "rdmabench"), "./cmd/rdmabench")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/rdmabench succeeded; want the verbs/nocgo.go error")
	}
	msg := string(out)
	for _, want := range []string{"verbs/nocgo.go", "rdmabench_needs_cgo", "CGO_ENABLED_1", "pkg_config", "libibverbs", "librdmacm"} {
		if !strings.Contains(msg, want) {
			t.Errorf("build error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "undefined:"); n != 1 {
		t.Errorf("want exactly one 'undefined:' line (the message), got %d:\n%s", n, msg)
	}
}

// TestPkgConfigErrorNamesPackage: with rdma-core's .pc files out of reach
// (PKG_CONFIG_LIBDIR pointing at an empty directory, as on a host without
// libibverbs-dev), the build fails with pkg-config's own error naming the
// package, which docs/install.md quotes.
func TestPkgConfigErrorNamesPackage(t *testing.T) {
	root, g := moduleRoot(t), goTool(t)
	if _, err := exec.LookPath("pkg-config"); err != nil {
		t.Skip("no pkg-config on PATH")
	}
	// The build cache keys a cgo package on CGO_CFLAGS but not on what
	// pkg-config says: a CGO_CFLAGS of its own makes go build compile verbs
	// (and so run pkg-config) instead of reusing the cached package. A
	// fixed value keeps the rebuilt runtime/cgo cached between runs; verbs
	// itself never builds with it, so it is never cached.
	cmd := exec.Command(g, "build", "./verbs")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "PKG_CONFIG_LIBDIR="+t.TempDir(), "PKG_CONFIG_PATH=",
		"CGO_CFLAGS=-g -O2 -DRDMABENCH_NO_PC_TEST")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go build ./verbs with no .pc files succeeded")
	}
	for _, want := range []string{"pkg-config", "libibverbs", "PKG_CONFIG_PATH"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("build error lacks %q:\n%s", want, out)
		}
	}
}
