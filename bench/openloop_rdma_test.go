package bench

import (
	"context"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/statusline"
	"github.com/rdmabench/rdmabench/internal/testhook"
)

// TestRDMAOpenLoopSlowRecorder: in open loop (--rate) the samples go to a
// ring that the drainer records on its own goroutine while the C loop keeps
// its schedule, so a slow recorder (100 ms per pass here) inflates no
// sample. Before, Go recorded each batch on the loop's thread between two
// sends: the sends due meanwhile went late, and their samples, which run
// from the intended send time, held the recorder's time (up to 100 ms).
// The bound, 50 ms, leaves room for the emulated guest's stalls (its
// p99 of READ round trips at this rate reaches 12 ms).
func TestRDMAOpenLoopSlowRecorder(t *testing.T) {
	requireDevice(t)
	defer func(c int) { testhook.SampleCap = c }(testhook.SampleCap)
	defer func(d time.Duration) { statusline.Delay = d }(statusline.Delay)
	testhook.SampleCap = 512 // batches of 256 (a quarter second): several boundaries
	statusline.Delay = 100 * time.Millisecond
	specs := plan(t, spec.Plan{Ops: []string{result.OpRead}, Modes: []string{result.ModeLat}, Sizes: []int{8},
		Template: spec.Spec{Iters: 1500, Rate: 1000, Warmup: -1}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	r := checkDoc(t, doc, specs).Results[0]
	t.Logf("%d round trips at %.0f/s: p50 %v, max %v", r.Iterations, r.OpenLoop.RateAchieved, r.Latency.P50, time.Duration(r.Latency.Max))
	if r.Latency.Max > float64(50*time.Millisecond) {
		t.Errorf("the largest sample is %v: the recorder's 100 ms delayed a send", time.Duration(r.Latency.Max))
	}
}
