package bench

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestOpVerbs: every row of the op table has its work request and ODP
// needs here, every access its verbs flag, and nothing else is mapped.
func TestOpVerbs(t *testing.T) {
	for _, r := range spec.Ops() {
		if v, ok := opVerbs[r.Name]; !ok || v.odp == 0 {
			t.Errorf("op %s: no verbs mapping (opVerbs) %+v", r.Name, v)
		}
		if _, ok := accessVerbs[r.Access]; !ok {
			t.Errorf("op %s: access %d has no verbs flag (accessVerbs)", r.Name, r.Access)
		}
	}
	if len(opVerbs) != len(spec.Ops()) {
		t.Errorf("opVerbs maps %d ops, the op table has %d", len(opVerbs), len(spec.Ops()))
	}
}
