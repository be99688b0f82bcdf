package plot

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// timelineDoc is a send bw test of 4 one-second intervals whose p99 rose
// in the third, where the client saw out-of-sequence packets and the
// server duplicates; sent_pkts moved in every interval (traffic, not
// trouble).
func timelineDoc() *result.Document {
	ns := func(v float64) result.Nanos { return result.Nanos{NS: v, OK: true} }
	side := func(d map[string]int64) *result.PortCounters {
		return &result.PortCounters{Device: "rxe2", Port: 1, Deltas: d}
	}
	var ivs []result.Interval
	for i, p99 := range []float64{20e3, 21e3, 900e3, 22e3} {
		iv := result.Interval{StartNS: int64(i) * 1e9, EndNS: int64(i+1) * 1e9, Ops: 1000, P50: ns(10e3), P99: ns(p99),
			Counters: &result.CounterDeltas{Client: side(map[string]int64{"sent_pkts": 1000}), Server: side(map[string]int64{"rcvd_pkts": 1000})}}
		if i == 2 {
			iv.Counters.Client.Deltas["out_of_seq_request"] = 12
			iv.Counters.Server.Deltas["duplicate_request"] = 5
		}
		ivs = append(ivs, iv)
	}
	ivs[3].P50 = result.Nanos{} // n/a: left out of its line
	return &result.Document{Env: result.Env{SoftwareRDMA: true}, Results: []result.Result{
		{Op: "send", Mode: "lat", SizeBytes: 2}, // no intervals: skipped
		{Op: "send", Mode: "bw", SizeBytes: 4096, Intervals: ivs},
	}}
}

func TestCounterSeries(t *testing.T) {
	ivs := timelineDoc().Results[1].Intervals
	got := counterSeries(ivs, nil)
	want := []counterLine{
		{side: "client", name: "out_of_seq_request", values: []float64{0, 0, 12, 0}},
		{side: "server", name: "duplicate_request", values: []float64{0, 0, 5, 0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trouble counters %+v, want %+v", got, want)
	}
	got = counterSeries(ivs, []string{"sent_pkts", "rcvd_pkts"})
	want = []counterLine{
		{side: "client", name: "sent_pkts", values: []float64{1000, 1000, 1000, 1000}},
		{side: "server", name: "rcvd_pkts", values: []float64{1000, 1000, 1000, 1000}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("named counters %+v, want %+v", got, want)
	}
	// an interval without the server's counters: NaN there, not 0
	ivs[1].Counters.Server = nil
	got = counterSeries(ivs, []string{"duplicate_request"})
	if len(got) != 1 || !math.IsNaN(got[0].values[1]) || got[0].values[2] != 5 || got[0].values[0] != 0 {
		t.Errorf("missing side: %+v", got)
	}
	if got := counterSeries([]result.Interval{{}}, nil); got != nil {
		t.Errorf("no counters: %+v", got)
	}
}

func TestTimeline(t *testing.T) {
	dir := t.TempDir()
	doc := timelineDoc()
	for _, c := range []struct {
		name string
		sel  Selection
		want []string
		not  []string
	}{
		{"trouble", Selection{}, []string{"send bw 4096B: latency and port counters per interval", "client out_of_seq_request",
			"server duplicate_request", "p99", "software RDMA", "time since the test"}, []string{"sent_pkts"}},
		{"named", Selection{Counters: []string{"sent_pkts"}}, []string{"client sent_pkts"}, []string{"out_of_seq_request"}},
		{"none moved", Selection{Counters: []string{"rnr"}}, []string{"rnr did not move", "nothing moved"}, nil},
	} {
		path := filepath.Join(dir, c.name+".svg")
		if err := Timeline([]*result.Document{doc}, []string{"run"}, c.sel, path); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: svg lacks %q", c.name, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(string(b), w) {
				t.Errorf("%s: svg has %q", c.name, w)
			}
		}
	}
	if err := Timeline([]*result.Document{doc}, nil, Selection{}, filepath.Join(dir, "t.png")); err != nil {
		t.Errorf("png: %v", err)
	}
	old := &result.Document{Results: []result.Result{{Op: "send", Mode: "bw", SizeBytes: 2,
		Intervals: []result.Interval{{EndNS: 1e9, P50: result.Nanos{NS: 1e3, OK: true}}}}}}
	path := filepath.Join(dir, "old.svg")
	if err := Timeline([]*result.Document{old}, nil, Selection{}, path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "none in these intervals") {
		t.Error("an interval list without counters does not say so")
	}
	for _, c := range []struct {
		name string
		doc  *result.Document
		sel  Selection
	}{
		{"no intervals", &result.Document{Results: []result.Result{{Op: "send", Mode: "lat", SizeBytes: 2}}}, Selection{}},
		{"no match", doc, Selection{Ops: []string{"read"}}},
		{"all n/a", &result.Document{Results: []result.Result{{Op: "send", Mode: "bw", SizeBytes: 2, Intervals: []result.Interval{{EndNS: 1e9}}}}}, Selection{}},
	} {
		if err := Timeline([]*result.Document{c.doc}, nil, c.sel, filepath.Join(dir, "x.svg")); !errors.Is(err, ErrNothingToPlot) {
			t.Errorf("%s: %v, want ErrNothingToPlot", c.name, err)
		}
	}
	// through Draw, as the CLI calls it
	written, err := Draw([]*result.Document{doc}, []string{"run"}, KindTimeline, Selection{}, filepath.Join(dir, "d.svg"))
	if err != nil || len(written) != 1 {
		t.Errorf("Draw timeline: %v %v", written, err)
	}
}
