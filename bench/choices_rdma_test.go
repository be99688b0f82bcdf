package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestRDMAChoicesRecorded runs the choices' defaults and their opposites
// on a real device: the JSON of each test records relaxed ordering,
// address stepping, GRH and completion vectors, and stepped WRITE, READ
// and SEND bandwidth tests still pass --verify.
func TestRDMAChoicesRecorded(t *testing.T) {
	requireDevice(t)
	var specs []spec.Spec
	for _, p := range []spec.Plan{
		{Ops: []string{result.OpWrite, result.OpRead, result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{64},
			Template: spec.Spec{Iters: 100, Warmup: -1, Verify: true}},
		{Ops: []string{result.OpFetchAdd}, Modes: []string{result.ModeBW, result.ModeLat}, Template: spec.Spec{Iters: 100, Warmup: -1}},
		{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{64},
			Template: spec.Spec{Iters: 100, Warmup: -1, QPs: 2, NoRelaxedOrdering: true, NoAddrStep: true, CompVectorSpread: true}},
	} {
		specs = append(specs, plan(t, p)...)
	}
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, doc, specs)
	for i, r := range doc.Results {
		s, c := specs[i], r.Choices
		if c == nil {
			t.Fatalf("%s: no choices in the result", s.Name())
		}
		wantStep := 64
		if s.Mode == result.ModeLat || s.NoAddrStep {
			wantStep = 0
		}
		grh := doc.Env.LinkLayer == "Ethernet"
		got := fmt.Sprintf("relaxed %v step %d grh %v vectors %d pkey %d", c.RelaxedOrdering, c.AddrStepBytes, c.GRH, len(c.CompVectors), c.PKeyIndex)
		want := fmt.Sprintf("relaxed %v step %d grh %v vectors %d pkey 0", !s.NoRelaxedOrdering, wantStep, grh, 2*s.NumQPs())
		if got != want || (wantStep > 0 && c.AddrCycleBytes != spec.PageSize) || c.CompVectorsOf < 1 {
			t.Errorf("%s: %s (cycle %d of %d vectors), want %s", s.Name(), got, c.AddrCycleBytes, c.CompVectorsOf, want)
		}
		for _, v := range c.CompVectors {
			if v < 0 || v >= c.CompVectorsOf {
				t.Errorf("%s: completion vector %d of %d", s.Name(), v, c.CompVectorsOf)
			}
		}
		// the server's receives' step, as it reported it (in one process its
		// cache line is the client's)
		if c.RecvAddrStepBytes != endpoint.RecvStep(s) || c.ClientRecvAddrStepBytes != 0 {
			t.Errorf("%s: recv_addr_step_bytes %d, client_recv_addr_step_bytes %d; want %d, 0", s.Name(), c.RecvAddrStepBytes, c.ClientRecvAddrStepBytes, endpoint.RecvStep(s))
		}
		if s.Verify && (r.Verify == nil || r.Verify.Messages == 0) {
			t.Errorf("%s: verify %+v", s.Name(), r.Verify)
		}
	}
}
