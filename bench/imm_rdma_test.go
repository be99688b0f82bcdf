package bench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testhook"
)

// TestRDMAImm: WRITE and SEND with immediate run for real in both modes
// (RC: a size with a tail that is not a whole 8-byte word, and 4 KiB; UC;
// bandwidth on 2 QPs sharing an SRQ; bidirectional), and --verify checks
// each message's payload and its receive completion: the kind
// (IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV with IBV_WC_WITH_IMM) and the
// immediate.
func TestRDMAImm(t *testing.T) {
	requireDevice(t)
	ops := []string{result.OpWriteImm, result.OpSendImm}
	specs := plan(t, spec.Plan{Ops: ops, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{13, 4096},
		Template: spec.Spec{Iters: 100, Warmup: -1, TxDepth: 16, Verify: true}})
	specs = append(specs, plan(t, spec.Plan{Ops: ops, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{1024},
		Template: spec.Spec{Iters: 100, Warmup: -1, TxDepth: 16, QPType: result.QPTypeUC, Verify: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: ops, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 400, Warmup: -1, TxDepth: 16, QPs: 2, SRQ: true, Verify: true}})...)
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	for i, r := range back.Results {
		if r.Op != specs[i].Op || r.Iterations <= 0 {
			t.Errorf("result %d: op %s, %d iterations; want %s with some", i, r.Op, r.Iterations, specs[i].Op)
		}
	}
	var verified []spec.Spec
	var results []result.Result
	for i, s := range specs {
		if s.Verify {
			verified, results = append(verified, s), append(results, back.Results[i])
		}
	}
	checkVerified(t, &result.Document{Results: results}, verified)

	// bidirectional: both sides post and receive, the sum of both counted
	bidir := plan(t, spec.Plan{Ops: ops, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 400, Warmup: -1, TxDepth: 16, Bidirectional: true}})
	bd, err := RunLoopback(context.Background(), runCfg(bidir), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range bd.Results {
		if r.Op != bidir[i].Op || !r.Bidirectional || r.Iterations != 800 || r.Sides == nil {
			t.Errorf("-b %s: op %s, bidirectional %v, %d iterations, sides %+v; want 800 over both sides", bidir[i].Op, r.Op, r.Bidirectional, r.Iterations, r.Sides)
		}
	}
}

// TestRDMAImmCorrupt: an immediate changed before the check (the
// testhook.VerifyCorruptImm hook) fails the test with a *kinds.VerifyError naming the op,
// the server, the message and both immediates, in both modes.
func TestRDMAImmCorrupt(t *testing.T) {
	requireDevice(t)
	testhook.VerifyCorruptImm = true
	defer func() { testhook.VerifyCorruptImm = false }()
	for _, op := range []string{result.OpWriteImm, result.OpSendImm} {
		for _, mode := range []string{result.ModeLat, result.ModeBW} {
			t.Run(op+"/"+mode, func(t *testing.T) {
				specs := plan(t, spec.Plan{Ops: []string{op}, Modes: []string{mode}, Sizes: []int{4096},
					Template: spec.Spec{Iters: 100, Warmup: -1, TxDepth: 16, Verify: true}})
				_, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
				var ve *kinds.VerifyError
				if !errors.As(err, &ve) {
					t.Fatalf("planted immediate: %v (%T), want a *kinds.VerifyError", err, err)
				}
				s := specs[0]
				want := kinds.VerifyImm(s, 0)
				if ve.Op != op || ve.Checker != spec.VerifyServer || ve.Message != 0 || ve.Imm == nil || ve.Imm.Expected != want ||
					ve.Imm.Seen != want^1 || ve.Imm.Opcode != endpoint.OpVerbs[op].Code.String() {
					t.Errorf("kinds.VerifyError %+v (imm %+v): want %s checked by the server, message 0, immediate 0x%08x seen as 0x%08x", ve, ve.Imm, op, want, want^1)
				}
				if !strings.Contains(err.Error(), strings.ToUpper(op)+" immediate data wrong") {
					t.Errorf("error text: %v", err)
				}
				t.Logf("%v", err)
			})
		}
	}
}
