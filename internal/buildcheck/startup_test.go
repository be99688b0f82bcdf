package buildcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyInit are packages whose init costs every rdmabench process start-up
// time it does not need: under the test guests' emulation the JSON Schema
// validator's init alone took about 70 ms, against 100 ms for a whole
// empty Go program, and the binary starts hundreds of times in make test.
// The binary never validates documents (tests and meshcheck do), so it
// must not link them.
var heavyInit = []string{
	"github.com/santhosh-tekuri/jsonschema/v6",
	"golang.org/x/text/message",
}

// TestBinaryLeavesSchemaOut: the rdmabench binary does not depend on the
// packages in heavyInit (bench/result/schema holds the validator).
func TestBinaryLeavesSchemaOut(t *testing.T) {
	root, g := moduleRoot(t), goTool(t)
	cmd := exec.Command(g, "list", "-deps", "./cmd/rdmabench")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, h := range heavyInit {
		for _, d := range deps {
			if d == h {
				t.Errorf("the rdmabench binary links %s (its init runs at every start)", h)
			}
		}
	}
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
}
