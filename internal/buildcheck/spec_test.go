package buildcheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSpecIsPure: the test definition builds without cgo. The package
// imports only bench/result and the standard library, and nothing it
// depends on has cgo files or is verbs or sockeng (go list -deps).
func TestSpecIsPure(t *testing.T) {
	root, g := moduleRoot(t), goTool(t)
	list := func(format string, args ...string) []string {
		t.Helper()
		cmd := exec.Command(g, append([]string{"list", "-f", format}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	for _, imp := range list(`{{join .Imports " "}}`, "./bench/spec") {
		if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && imp != "github.com/rdmabench/rdmabench/bench/result" {
			t.Errorf("bench/spec imports %s: only bench/result and the standard library", imp)
		}
	}
	for _, p := range list(`{{.ImportPath}}{{if .CgoFiles}} cgo:{{.ImportPath}}{{end}}`, "-deps", "./bench/spec") {
		if strings.HasPrefix(p, "cgo:") || strings.HasSuffix(p, "/verbs") || strings.HasSuffix(p, "/sockeng") || p == "runtime/cgo" {
			t.Errorf("bench/spec depends on %s", p)
		}
	}
}
