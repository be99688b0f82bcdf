package isolation

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func run(p50, p9999 float64, mpps float64) result.IsolationRun {
	r := result.IsolationRun{P50: result.Nanos{NS: p50, OK: true}, P90: result.Nanos{NS: p50 * 1.2, OK: true},
		P99: result.Nanos{NS: p50 * 2, OK: true}, P99_9: result.Nanos{NS: p50 * 3, OK: true}, Mpps: mpps}
	if p9999 > 0 {
		r.P99_99 = result.Nanos{NS: p9999, OK: true}
	}
	r.Quantiles = []result.Quantile{{P: 50, Value: r.P50, CILow: result.Nanos{NS: p50 * 0.9, OK: true}, CIHigh: result.Nanos{NS: p50 * 1.1, OK: true}}}
	return r
}

func find(rs []result.InflationRatio, fig string) result.InflationRatio {
	for _, r := range rs {
		if r.Figure == fig {
			return r
		}
	}
	return result.InflationRatio{}
}

func TestRatiosBootstrap(t *testing.T) {
	alone := []result.IsolationRun{run(1000, 0, 0.2), run(1100, 0, 0.21), run(900, 5000, 0.19)}
	att := []result.IsolationRun{run(3000, 0, 0.1), run(3300, 0, 0.09), run(2700, 0, 0.11)}
	rs := Ratios(alone, att, 0.95)
	if len(rs) != len(result.IsolationFigures) {
		t.Fatalf("%d ratios", len(rs))
	}
	p50 := find(rs, "p50")
	if p50.Ratio == nil || *p50.Ratio != 3 || p50.Method != result.IntervalRuns || p50.AloneRuns != 3 || p50.AttackedRuns != 3 {
		t.Fatalf("p50 %+v", p50)
	}
	if !(*p50.Low <= 3 && 3 <= *p50.High && *p50.Low > 2 && *p50.High < 4) {
		t.Errorf("p50 interval %v-%v around 3", *p50.Low, *p50.High)
	}
	bw := find(rs, "bandwidth")
	if bw.Ratio == nil || *bw.Ratio != 0.1/0.2 || bw.Low == nil {
		t.Errorf("bandwidth %+v", bw)
	}
	// p99.99 backed in one alone run only, in no attacked run: n/a
	if r := find(rs, "p99.99"); r.Ratio != nil || r.Low != nil || r.AloneRuns != 1 || r.AttackedRuns != 0 || r.Method != "" {
		t.Errorf("p99.99 %+v, want n/a", r)
	}
}

// TestRatiosOneRun: one run each: the percentile's interval is the ratio
// of the order-statistic intervals; the bandwidth has none.
func TestRatiosOneRun(t *testing.T) {
	rs := Ratios([]result.IsolationRun{run(1000, 0, 0.2)}, []result.IsolationRun{run(2000, 0, 0.1)}, 0.95)
	p50 := find(rs, "p50")
	if p50.Method != result.IntervalOrderStat || *p50.Ratio != 2 || *p50.Low != 1800/1100.0 || *p50.High != 2200/900.0 {
		t.Errorf("p50 %+v", p50)
	}
	if bw := find(rs, "bandwidth"); bw.Ratio == nil || bw.Low != nil || bw.Method != "" {
		t.Errorf("bandwidth %+v", bw)
	}
	if p99 := find(rs, "p99"); p99.Ratio == nil || p99.Low != nil { // no quantile interval recorded
		t.Errorf("p99 %+v", p99)
	}
}

// TestRatiosUneven: a side with one backed run (the other run n/a) still
// gets a bootstrap interval when the sides have 3 runs together.
func TestRatiosUneven(t *testing.T) {
	none := result.IsolationRun{}
	rs := Ratios([]result.IsolationRun{none, run(1000, 0, 0.2)}, []result.IsolationRun{run(2000, 0, 0.1), run(2400, 0, 0.1)}, 0.95)
	p50 := find(rs, "p50")
	if p50.AloneRuns != 1 || p50.AttackedRuns != 2 || p50.Method != result.IntervalRuns || p50.Low == nil || *p50.Low < 1.9 || *p50.High > 2.5 {
		t.Errorf("p50 %+v", p50)
	}
}
