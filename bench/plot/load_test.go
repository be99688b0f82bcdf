package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestLoadSweeps(t *testing.T) {
	ns := func(v float64) result.Nanos { return result.Nanos{NS: v, OK: true} }
	sw := result.LoadSweep{Test: "send lat 2B", LoadOp: "write", LoadSize: 65536, LoadQPs: 2, PeakMsgsPerSec: 1000, ProbeRate: 500,
		Points: []result.LoadPoint{
			{Offered: 0, P50: ns(10e3), P99: ns(20e3), P99_9: ns(30e3)},
			{Offered: 0.5, P50: ns(12e3), P99: ns(30e3), P99_9: ns(50e3)},
			{Offered: 0.9, P50: ns(20e3), P99: ns(90e3), P99_9: result.Nanos{}},
		}}
	sw.FindKnee()
	if sw.Knee == nil || *sw.Knee != 0.9 {
		t.Fatalf("knee %v, want 0.9", sw.Knee)
	}
	path := filepath.Join(t.TempDir(), "load.svg")
	if err := LoadSweeps([]*result.Document{{LoadSweeps: []result.LoadSweep{sw}}}, nil, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"knee of send lat 2B at 90%", "offered load", "send lat 2B p99.9"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("svg lacks %q", w)
		}
	}
	if err := LoadSweeps([]*result.Document{{}}, nil, path); err == nil {
		t.Error("no sweep, no error")
	}
}
