package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// checkPerQP checks a multi-QP result: n per-QP entries, distinct QPNs,
// threads in range, ops summing to the aggregate, each QP busy.
func checkPerQP(t *testing.T, r result.Result, n, m int) {
	t.Helper()
	name := r.Op + " " + r.Mode
	if r.QPs != n || r.Threads != m || len(r.PerQP) != n {
		t.Fatalf("%s: qps %d threads %d, %d per_qp entries; want %d, %d, %d", name, r.QPs, r.Threads, len(r.PerQP), n, m, n)
	}
	var sum, samples int64
	seen := map[uint32]bool{}
	for i, q := range r.PerQP {
		sum += q.Ops
		samples += q.Latency.Count
		if seen[q.QPN] || q.Thread != i%m || q.Ops <= 0 || q.Bandwidth.MBPerSec <= 0 {
			t.Errorf("%s: QP %d: qpn %d (dup %v), thread %d, %d ops, %v", name, i, q.QPN, seen[q.QPN], q.Thread, q.Ops, q.Bandwidth)
		}
		seen[q.QPN] = true
	}
	if sum != r.Iterations {
		t.Errorf("%s: per-QP ops sum to %d, aggregate %d", name, sum, r.Iterations)
	}
	if samples != r.Samples || samples != r.Latency.Count {
		t.Errorf("%s: per-QP latency counts sum to %d, merged histogram %d, latency count %d", name, samples, r.Samples, r.Latency.Count)
	}
}

// TestRDMAQPsThreadsBandwidth: iterations split over 8 QPs on 2 threads;
// the progress line stays live without intervals too (the drainer keeps
// it, as for one QP).
func TestRDMAQPsThreadsBandwidth(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite, result.OpSend, result.OpRead}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 4003, TxDepth: 32, Warmup: -1, QPs: 8, Threads: 2}})
	cfg := runCfg(specs)
	var prog strings.Builder // written by the drainer, read once the run is over
	cfg.Client.Run.Progress = &prog
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	for _, r := range back.Results {
		checkPerQP(t, r, 8, 2)
		// 4003 over 8 QPs: 501 on the first three, 500 on the rest
		for i, q := range r.PerQP {
			if want := endpoint.QPIters(4003, 8, i); q.Ops != want {
				t.Errorf("%s: QP %d did %d ops, want %d", r.Op, i, q.Ops, want)
			}
		}
		t.Logf("%s x8/2 threads: %.1f MB/s aggregate", r.Op, r.Bandwidth.MBPerSec)
	}
	for _, op := range []string{result.OpWrite, result.OpSend, result.OpRead} {
		if !strings.Contains(prog.String(), op+" bw 4K") || !strings.Contains(prog.String(), " done, p50 ") {
			t.Errorf("no progress line of %s bw: %q", op, prog.String())
		}
	}
}

func TestRDMAQPs64Threads4(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{64}, Template: spec.Spec{Iters: 64 * 50, TxDepth: 8, CQMod: 4, Warmup: -1, QPs: 64, Threads: 4}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	checkPerQP(t, back.Results[0], 64, 4)
}

// TestRDMAQPsThreadsDuration: a multi-QP duration run with --interval has
// one interval list for the test, its boundaries on the test's clock (each
// thread's C loop returns at the boundary, as a single QP's does), the
// operations of every QP summed inside each interval.
func TestRDMAQPsThreadsDuration(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Duration: time.Second, WarmupTime: 100 * time.Millisecond, TxDepth: 16, QPs: 4, Threads: 2}})
	cfg := runCfg(specs)
	cfg.Client.Run.Interval = 250 * time.Millisecond
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	for _, r := range back.Results {
		checkPerQP(t, r, 4, 2)
		late := checkIntervals(t, r, time.Second, 250*time.Millisecond)
		t.Logf("%s: %d intervals, the latest boundary closed %v late", r.Op, len(r.Intervals), late)
		if d := time.Duration(r.DurationNS); d < 900*time.Millisecond || d > 3*time.Second || len(r.Intervals) < 2 || r.Warmup == 0 {
			t.Errorf("%s: measured %v, %d intervals, warm-up %d; want about 1s, >= 2, > 0", r.Op, d, len(r.Intervals), r.Warmup)
			for _, it := range r.Intervals {
				t.Logf("interval %v..%v: %d ops", time.Duration(it.StartNS), time.Duration(it.EndNS), it.Ops)
			}
			for _, q := range r.PerQP {
				t.Logf("QP %d (thread %d): %d ops, %.1f MB/s", q.QPN, q.Thread, q.Ops, q.Bandwidth.MBPerSec)
			}
		}
	}
}

// checkIntervals checks a duration run's interval list against the one
// clock of the test: one list (not one per thread: at most one interval per
// every of the run), the intervals contiguous from the start, each past
// its boundary, their operations summing to the result's. A boundary
// closes late when a thread's C loop returns late (the interval ends when
// the last thread's did): a loaded host starves the guest for hundreds of
// milliseconds, so lateness is returned (the latest) rather than bounded,
// and a missing interval must show as one spanning a boundary it skipped.
func checkIntervals(t *testing.T, r result.Result, dur, every time.Duration) time.Duration {
	t.Helper()
	name := r.Op + " " + r.Mode
	want := int((dur + every - 1) / every)
	var sum int64
	var worst time.Duration
	skipped := false
	for k, it := range r.Intervals {
		sum += it.Ops
		if k == 0 && it.StartNS != 0 || k > 0 && it.StartNS != r.Intervals[k-1].EndNS {
			t.Errorf("%s: interval %d starts at %v, not where the one before ended", name, k, time.Duration(it.StartNS))
		}
		if it.Ops <= 0 || it.EndNS <= it.StartNS {
			t.Errorf("%s: interval %d: %d ops over %v..%v", name, k, it.Ops, time.Duration(it.StartNS), time.Duration(it.EndNS))
		}
		if k == len(r.Intervals)-1 {
			continue
		}
		edge := time.Duration(k+1) * every
		if time.Duration(it.EndNS) < edge {
			t.Errorf("%s: interval %d ends at %v, before its boundary %v", name, k, time.Duration(it.EndNS), edge)
		}
		worst = max(worst, time.Duration(it.EndNS)-edge)
		skipped = skipped || time.Duration(it.EndNS-it.StartNS) > every*3/2
	}
	if n := len(r.Intervals); n > want || n < want && !skipped || n == 0 {
		t.Errorf("%s: %d intervals in a %v run with intervals of %v, want %d", name, n, dur, every, want)
	}
	if sum != r.Iterations {
		t.Errorf("%s: the intervals hold %d ops, the result %d", name, sum, r.Iterations)
	}
	if t.Failed() {
		for _, it := range r.Intervals {
			t.Logf("interval %v..%v: %d ops", time.Duration(it.StartNS), time.Duration(it.EndNS), it.Ops)
		}
	}
	return worst
}
