package bench

import (
	"context"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testhook"
)

// TestRDMABWNoSampleStall: a WRITE bandwidth test that signals every
// operation and completes more of them than the sample buffer holds
// (endpoint.SampleCap()) never stops posting to drain samples: the drainer records
// them on its own goroutine (bwdrain.go), and the C loop does not return
// at buffer boundaries. Before the ring, it returned once per endpoint.SampleCap()
// completions and posted nothing while Go recorded the buffer.
func TestRDMABWNoSampleStall(t *testing.T) {
	requireDevice(t)
	defer func(c int) { testhook.SampleCap = c }(testhook.SampleCap)
	testhook.SampleCap = 1024 // buffer boundaries within a short test
	// 8 buffers and a quarter: the old loop returned at each boundary (8
	// returns); the ring returns only when the drainer falls a whole ring
	// behind, which a guest's vCPU descheduled for a few ms can cause once
	// (1 of 1,280 operations in a make test run on TCG), so fewer than half
	// the old returns pass and the old loop still fails
	const buffers = 8
	iters := int64(buffers*endpoint.SampleCap() + endpoint.SampleCap()/4)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{64},
		Template: spec.Spec{Iters: iters, TxDepth: 128, CQMod: 1, Warmup: -1}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	r := checkDoc(t, doc, specs).Results[0]
	if r.Samples != iters {
		t.Errorf("%d samples recorded, want %d (one per signaled completion)", r.Samples, iters)
	}
	p := r.PostingPauses
	if p == nil {
		t.Fatal("no posting_pauses in the result")
	}
	t.Logf("%d operations in %v: %d returns for a full sample buffer, longest pause %v",
		r.Iterations, time.Duration(r.DurationNS), p.SampleBufferFull, time.Duration(p.MaxNS))
	if p.SampleBufferFull >= buffers/2 {
		t.Errorf("the loop stopped %d times for a full sample buffer, want fewer than %d (a loop returning at each buffer boundary: %d)",
			p.SampleBufferFull, buffers/2, buffers)
	}
}

// TestRDMAMultiQPOneReceiver: the server of a multi-QP SEND bandwidth test
// polls all its QPs' receive CQs from one thread (perftest's one process),
// not one busy-polling thread per QP, and every message arrives.
func TestRDMAMultiQPOneReceiver(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{QPs: 8, Iters: 4000, TxDepth: 32, Warmup: -1}})
	testhook.ResponderThreads.ResetPeak()
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	r := checkDoc(t, doc, specs).Results[0]
	if r.QPs != 8 || r.Iterations != 4000 {
		t.Errorf("%d QPs, %d iterations; want 8 and 4000", r.QPs, r.Iterations)
	}
	if p := testhook.ResponderThreads.Peak(); p != 1 {
		t.Errorf("the server ran %d responder threads at once for 8 QPs, want 1", p)
	}
	t.Logf("8 QPs: %.1f MiB/s, server CPU %d us", r.Bandwidth.MiBPerSec, (r.CPU.ServerUserNS+r.CPU.ServerSysNS)/1000)
}
