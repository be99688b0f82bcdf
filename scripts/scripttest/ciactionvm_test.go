//go:build experiment

// A guest boot (about a minute): go test -tags experiment -run TestCIActionVM
// ./scripts/scripttest, alone (docs/ci.md); not part of make test.

package scripttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCIActionVM runs the VM bed end to end (CI_ACTION_VM=1: a guest boot,
// about a minute; it takes the guest bed, so run it alone): a loopback run
// in the qemu guest, then its result gated against itself.
func TestCIActionVM(t *testing.T) {
	if os.Getenv("CI_ACTION_VM") != "1" {
		t.Fatal("CI_ACTION_VM=1 is not set: it runs the action's VM bed (a guest boot)")
	}
	a := newCIAction(t)
	res := filepath.Join(a.tmp, "vm.json")
	env := []string{"RDMABENCH_BIN=" + a.bin, "GITHUB_OUTPUT=" + a.output, "GITHUB_STEP_SUMMARY=" + a.summary,
		"RDMABENCH_BED=vm", "RDMABENCH_RESULT=" + res, "RDMABENCH_ARGS=--op send --mode lat --size 2 --iters 2000"}
	r := runCombined(t, 10*time.Minute, a.root, env, "scripts/ci-action.sh", "run")
	if r.code != 0 || !strings.Contains(r.out(), "result="+res) {
		t.Fatalf("run: bed=vm in the qemu guest: exit %d (want 0 and result=%s):\n%s", r.code, res, r.out())
	}
	a.step("the guest's result against itself", 0, `no regressions`, "gate", "RDMABENCH_BASELINE="+res, "RDMABENCH_RESULT="+res)
}
