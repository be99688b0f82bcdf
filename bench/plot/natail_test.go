package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
	"github.com/rdmabench/rdmabench/hist"
)

// TestPercentilePlotStopsAtBackedTail: the percentile plot of a run of
// 2,000 iterations, whose tables call p99.9 n/a, draws no point past the
// percentile its samples back, its axis does not reach 99.9 %, and it says
// that the tail is not drawn.
func TestPercentilePlotStopsAtBackedTail(t *testing.T) {
	vals := make([]int64, 2000) // a run of 2,000 iterations: p99.9 is n/a
	for i := range vals {
		vals[i] = 1000 + int64(i*i%7919)
	}
	doc := &result.Document{SchemaVersion: result.SchemaVersion, Tool: "rdmabench", Role: "loopback",
		Results: []result.Result{{Op: result.OpSend, Mode: result.ModeLat, SizeBytes: 2, Iterations: 2000}}}
	if err := doc.Results[0].SetLatency(resulttest.Hist(t, vals...), 2); err != nil {
		t.Fatal(err)
	}
	for i := range doc.Results {
		r := &doc.Results[i]
		if r.Latency.P99_9.OK {
			t.Fatal("p99.9 of 2,000 samples is backed")
		}
		xys, all, err := percentilePoints(r)
		if err != nil {
			t.Fatal(err)
		}
		if all {
			t.Errorf("%s: every point drawn", result.KeyOf(r))
		}
		for _, p := range xys {
			if q := 100 * (1 - 1/p.X); p.X > 1 && hist.MinSamples(q, 0.95) > r.Samples {
				t.Errorf("%s: a point at p%.4g, which %d samples do not back", result.KeyOf(r), q, r.Samples)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "p.svg")
	if err := Percentiles([]*result.Document{doc}, []string{"a"}, Selection{}, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	if strings.Contains(svg, ">99.9%<") {
		t.Error("the axis is labelled 99.9 %, which the samples do not back")
	}
	if !strings.Contains(svg, "is not drawn") {
		t.Error("the plot does not say that the tail is not drawn")
	}
}
