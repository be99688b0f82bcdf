package bench

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/spec"
)

func TestMRModePlan(t *testing.T) {
	specs, err := spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeLat, result.ModeBW}, Template: spec.Spec{MRMode: result.MRModePerOp, HugePages: true}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.MRMode != result.MRModePerOp || !s.HugePages || !strings.Contains(s.TimedInterval(), "per-operation registration") {
			t.Errorf("%s: mr mode %q, hugepages %v, interval %q", s.Name(), s.MRMode, s.HugePages, s.TimedInterval())
		}
		r := measure.BaseResult(s, nil)
		if r.MRMode != result.MRModePerOp || !r.HugePages {
			t.Errorf("%s: result mr_mode %q, hugepages %v", s.Name(), r.MRMode, r.HugePages)
		}
	}
	tcp := spec.Spec{Op: result.OpSend, Transport: result.TransportTCP}
	if tcp.MRModeLabel() != "" || (spec.Spec{}).MRModeLabel() != result.MRModePool {
		t.Errorf("labels: tcp %q, default %q", tcp.MRModeLabel(), (spec.Spec{}).MRModeLabel())
	}
}
