package result_test

import (
	"math"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// runOf is a latency run of 1000 samples around base ns.
func runOf(t *testing.T, base int64) result.Result {
	h := hist.New()
	for i := int64(0); i < 1000; i++ {
		h.Record(base + i)
	}
	r := result.Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: 1000, DurationNS: 1e9,
		Bandwidth: result.NewBandwidth(2, 1000, 1e9)}
	if err := r.SetLatency(h, 1); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCombineRuns(t *testing.T) {
	bases := []int64{10000, 30000, 20000, 50000, 40000, 60000}
	var runs []result.Result
	for _, b := range bases {
		runs = append(runs, runOf(t, b))
	}
	got, err := result.CombineRuns(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 6 || got.Repeat == nil || got.Repeat.Runs != 6 || got.Samples != 6000 || got.Iterations != 6000 {
		t.Fatalf("runs %d, repeat %+v, samples %d, iterations %d", len(got.Runs), got.Repeat, got.Samples, got.Iterations)
	}
	// p50 of each run is base+500; the median of 6 runs is the mean of the
	// 3rd and 4th: (30500 + 40500) / 2
	p50, ok := got.Latency.Quantile(50)
	if !ok || !p50.Value.OK || math.Abs(p50.Value.NS-35500) > 40 || math.Abs(got.Latency.P50.NS-p50.Value.NS) > 0 {
		t.Errorf("p50 %+v (field %v), want about 35500", p50, got.Latency.P50)
	}
	// 6 runs back the median's 95 % interval: the smallest and largest run
	if !p50.CILow.OK || math.Abs(p50.CILow.NS-10500) > 20 || math.Abs(p50.CIHigh.NS-60500) > 70 {
		t.Errorf("p50 interval [%v, %v], want the extreme runs", p50.CILow, p50.CIHigh)
	}
	var sp *result.Spread
	for i := range got.Repeat.Figures {
		if got.Repeat.Figures[i].Figure == "p50" {
			sp = &got.Repeat.Figures[i]
		}
	}
	if sp == nil || sp.Runs != 6 || math.Abs(sp.Min-10500) > 20 || math.Abs(sp.Max-60500) > 70 || sp.CV < 0.4 || sp.CV > 0.6 {
		t.Errorf("p50 spread %+v", sp)
	}
	five, _ := result.CombineRuns(runs[:5])
	if q, _ := five.Latency.Quantile(50); !q.Value.OK || q.CILow.OK {
		t.Errorf("5 runs: p50 %+v, want a median without an interval", q)
	}
	one, _ := result.CombineRuns(runs[:1])
	if one.Repeat != nil || one.Runs != nil {
		t.Errorf("one run combined into a repeat")
	}
}
