package endpoint

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestOpVerbs: every row of the op table has its work request and ODP
// needs here, every access its verbs flag, and nothing else is mapped.
func TestOpVerbs(t *testing.T) {
	for _, r := range spec.Ops() {
		v, ok := OpVerbs[r.Name]
		if !ok || v.ODP == 0 {
			t.Errorf("op %s: no verbs mapping (opVerbs) %+v", r.Name, v)
		}
		withImm := v.Code == verbs.OpWriteWithImm || v.Code == verbs.OpSendWithImm
		switch {
		case r.Imm != withImm:
			t.Errorf("op %s: immediate data %v, but its work request is %s", r.Name, r.Imm, v.Code)
		case r.ConsumesRecv && v.ODP&verbs.ODPRecv == 0:
			t.Errorf("op %s consumes receives: its ODP needs lack ODPRecv", r.Name)
		}
		if _, ok := accessVerbs[r.Access]; !ok {
			t.Errorf("op %s: access %d has no verbs flag (accessVerbs)", r.Name, r.Access)
		}
	}
	if len(OpVerbs) != len(spec.Ops()) {
		t.Errorf("opVerbs maps %d ops, the op table has %d", len(OpVerbs), len(spec.Ops()))
	}
}
