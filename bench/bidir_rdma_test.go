package bench

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// checkBidir checks the bidirectional results of doc (run from specs): the
// document against the schema (checkDoc, which counts both sides'
// operations), both sides moved data, and every sum equals its parts.
func checkBidir(t *testing.T, doc *result.Document, specs []spec.Spec) []result.Result {
	t.Helper()
	both := append([]spec.Spec(nil), specs...)
	for i := range both {
		both[i].Iters *= 2 // a bidirectional result's iterations are both sides' operations
	}
	back := checkDoc(t, doc, both)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	for i, r := range back.Results {
		s := specs[i]
		name := s.Name()
		if !r.Bidirectional || r.Sides == nil {
			t.Errorf("%s: bidirectional %v, sides %v", name, r.Bidirectional, r.Sides)
			continue
		}
		c, v := r.Sides.Client, r.Sides.Server
		for _, sd := range []struct {
			who string
			s   result.SideResult
		}{{"client", c}, {"server", v}} {
			if sd.s.Ops <= 0 || sd.s.Bytes != sd.s.Ops*int64(s.Size) || sd.s.DurationNS <= 0 || sd.s.Bandwidth.MBPerSec <= 0 ||
				(s.Iters > 0 && sd.s.Ops != s.Iters) || (s.Warmup > 0 && sd.s.Warmup != s.Warmup) {
				t.Errorf("%s: the %s moved %+v; want %d ops, warm-up %d", name, sd.who, sd.s, s.Iters, s.Warmup)
			}
		}
		b, cb, vb := r.Bandwidth, c.Bandwidth, v.Bandwidth
		if r.Iterations != c.Ops+v.Ops || r.Warmup != c.Warmup+v.Warmup || r.DurationNS != max(c.DurationNS, v.DurationNS) ||
			!near(b.MiBPerSec, cb.MiBPerSec+vb.MiBPerSec) || !near(b.MBPerSec, cb.MBPerSec+vb.MBPerSec) ||
			!near(b.GbitPerSec, cb.GbitPerSec+vb.GbitPerSec) || !near(b.Mpps, cb.Mpps+vb.Mpps) {
			t.Errorf("%s: total %d ops, warm-up %d, %d ns, %+v is not client %+v + server %+v", name, r.Iterations, r.Warmup, r.DurationNS, b, c, v)
		}
		if r.CPU == nil || r.CPU.ServerUserNS+r.CPU.ServerSysNS <= 0 || r.CPU.ClientUserNS+r.CPU.ClientSysNS <= 0 {
			t.Errorf("%s: CPU %+v: both sides' engine threads work", name, r.CPU)
		}
		if r.Counters == nil || r.Counters.Client == nil || r.Counters.Server == nil || r.Counters.Server.Deltas["sent_pkts"] <= 0 {
			t.Errorf("%s: counters %+v: both sides' port counters, with packets sent", name, r.Counters)
		}
		// a SEND client receives too: its own receives' step besides the server's
		if ch := r.Choices; ch == nil || ch.RecvAddrStepBytes != endpoint.RecvStep(s) || ch.ClientRecvAddrStepBytes != endpoint.RecvStep(s) {
			t.Errorf("%s: choices %+v: the receives of both sides step by %d", name, ch, endpoint.RecvStep(s))
		}
		if r.TimedInterval != spec.BidirInterval || r.Samples <= 0 {
			t.Errorf("%s: interval %q, %d samples", name, r.TimedInterval, r.Samples)
		}
		t.Logf("%s -b: client %d ops in %.3f s, %.1f MiB/s; server %d ops in %.3f s, %.1f MiB/s; total %.1f MiB/s %.4f Mpps",
			name, c.Ops, float64(c.DurationNS)/1e9, cb.MiBPerSec, v.Ops, float64(v.DurationNS)/1e9, vb.MiBPerSec, b.MiBPerSec, b.Mpps)
	}
	return back.Results
}

// TestRDMABidirectional: every operation both ways at once, counted.
func TestRDMABidirectional(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite, result.OpRead, result.OpFetchAdd, result.OpCmpSwap}, Modes: []string{result.ModeBW},
		Sizes: []int{4096}, Template: spec.Spec{Iters: 2000, TxDepth: 32, CQMod: 4, Warmup: 64, Bidirectional: true}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	checkBidir(t, doc, specs)
}

// TestRDMABidirectionalDuration: both sides measure about the duration from
// the common start; the client's interval lines are its own direction.
func TestRDMABidirectionalDuration(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Duration: 1500 * time.Millisecond, WarmupTime: 100 * time.Millisecond, TxDepth: 16, CQMod: 4, Bidirectional: true}})
	cfg := runCfg(specs)
	var lines strings.Builder
	cfg.Client.Run.Out, cfg.Client.Run.Interval = &lines, 500*time.Millisecond
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range checkBidir(t, doc, specs) {
		// Each side's span runs from its first post to its last completion
		// after the deadline: a side whose thread the guest starved at the
		// start (two busy-polling threads on two vCPUs, under TCG) posts
		// late and measures less; the longer span is about the duration.
		for _, d := range []int64{r.Sides.Client.DurationNS, r.Sides.Server.DurationNS} {
			if d := time.Duration(d); d <= 0 || d > 3*time.Second {
				t.Errorf("%s: a side measured %v, want at most about 1.5s", r.Op, d)
			}
		}
		if d := time.Duration(r.DurationNS); d < 1400*time.Millisecond {
			t.Errorf("%s: the longer side measured %v, want about 1.5s", r.Op, d)
		}
		if len(r.Intervals) < 1 || r.Sides.Client.Warmup == 0 || r.Sides.Server.Warmup == 0 {
			t.Errorf("%s: %d intervals, warm-up %d and %d", r.Op, len(r.Intervals), r.Sides.Client.Warmup, r.Sides.Server.Warmup)
		}
	}
	if strings.Count(lines.String(), "\n") < 2 {
		t.Errorf("too few interval lines:\n%s", lines.String())
	}
}

// TestRDMABidirectionalSmallRxDepth: SEND both ways with a receive queue of
// 16 under a send window of 64 and far more messages: each side's loop must
// re-post its receives while it sends, or the other stalls on RNR.
func TestRDMABidirectionalSmallRxDepth(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{64, 8192},
		Template: spec.Spec{Iters: 2500, TxDepth: 64, CQMod: 16, RxDepth: 16, Warmup: 500, Bidirectional: true}}) // 16-deep receive queues wrap 150 times
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	checkBidir(t, doc, specs)
}

// TestRDMABidirectionalUC: WRITE both ways on UC QPs (no receiver to lose
// a message).
func TestRDMABidirectionalUC(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 2000, TxDepth: 32, Warmup: -1, QPType: result.QPTypeUC, Bidirectional: true}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range checkBidir(t, doc, specs) {
		if r.QPType != "UC" {
			t.Errorf("QP type %s", r.QPType)
		}
	}
}

// TestRDMABidirectionalServerClient: bidirectional tests against a separate
// server keep the session in step: one-way tests after them pass, and so
// does a bidirectional test after a cancelled one, on the same server.
func TestRDMABidirectionalServerClient(t *testing.T) {
	requireDevice(t)
	addr := startServer(t)
	bidir := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpRead}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 1000, TxDepth: 32, Warmup: -1, Bidirectional: true}})
	oneWay := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{64},
		Template: spec.Spec{Iters: 500, Warmup: -1}})
	doc, err := RunClient(context.Background(), addr, runCfg(append(append([]spec.Spec(nil), bidir...), oneWay...)))
	if err != nil {
		t.Fatal(err)
	}
	first, rest := *doc, *doc
	first.Results, rest.Results = doc.Results[:len(bidir)], doc.Results[len(bidir):]
	checkBidir(t, &first, bidir)
	for _, r := range checkDoc(t, &rest, oneWay).Results {
		if r.Bidirectional || r.Sides != nil {
			t.Errorf("%s %s after bidirectional tests: bidirectional %v, sides %v", r.Op, r.Mode, r.Bidirectional, r.Sides)
		}
	}

	// A client cancelled in the middle of a bidirectional SEND test: the
	// server gives up on it and serves the next client.
	cl, err := Dial(context.Background(), addr, ClientConfig{Port: 1, GIDIndex: -1}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	long := bidir[0]
	long.Iters, long.Duration = 0, 20*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := cl.Run(ctx, long, measure.Options{CPU: -1}); err == nil || (!errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "aborted")) {
		t.Fatalf("cancelled bidirectional test: %v", err)
	} else {
		t.Logf("cancelled after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancelling took %v", d)
	}
	cl.Close()
	doc, err = RunClient(context.Background(), addr, runCfg(bidir[:1]))
	if err != nil {
		t.Fatalf("next client: %v", err)
	}
	checkBidir(t, doc, bidir[:1])
}
