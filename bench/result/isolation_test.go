package result_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

func fullIsolation() *result.IsolationDocument {
	n := func(v float64) result.Nanos { return result.Nanos{NS: v, OK: true} }
	f := func(v float64) *float64 { return &v }
	run := result.IsolationRun{Round: 1, Iterations: 1000, P50: n(1000), P90: n(1200), P99: n(2000), P99_9: n(3000), P99_99: n(4000),
		Max: 5000, Mpps: 0.2, MBPerSec: 0.4, Quantiles: []result.Quantile{{P: 50, Value: n(1000), CILow: n(990), CIHigh: n(1010)}}}
	now := time.Now()
	return &result.IsolationDocument{ToolVersion: "test", CommandLine: []string{"rdmabench", "isolation"}, Start: now, End: now,
		Role: "client", Peer: "192.0.2.1:18515", Device: "rxe0", Victim: "send lat 2B", VictimInterval: "RTT/2", Repeat: 1,
		RunDurationNS: 1e9, Confidence: 0.95, EstimatedNS: 3e9, ElapsedNS: 3e9, Alone: []result.IsolationRun{run},
		Attackers: []result.IsolationAttacker{{Name: "pcie-sizes", Class: "PCIe-unfriendly sizes", Description: "d",
			Load: result.IsolationLoad{QPs: 4, Op: "send", SizeBytes: 129, AltSizeBytes: 257, TxDepth: 16, Threads: 4, RNR: true, ChurnSizeBytes: 1 << 20, MRs: 4096},
			Runs: []result.IsolationRun{run}, Achieved: []result.AttackerRate{{Mpps: 1, MBPerSec: 2, RegistrationsPerSec: 3}},
			AchievedMedian: result.AttackerRate{Mpps: 1, MBPerSec: 2, RegistrationsPerSec: 3},
			Ratios: []result.InflationRatio{{Figure: "p99", Alone: f(1), Attacked: f(2), Ratio: f(2), Low: f(1.5), High: f(2.5),
				Method: result.IntervalRuns, AloneRuns: 3, AttackedRuns: 3}}}},
		Bounds:   []result.InflationBound{{Figure: "p99", Max: 2}},
		Verdicts: []result.InflationVerdict{{Attacker: "pcie-sizes", Figure: "p99", Max: 2, Ratio: f(2), Low: f(1.5), High: f(2.5), Verdict: result.VerdictPass}},
		Partial:  true, Warnings: []string{"w"}}
}

// TestIsolationSchema: the encoder's output validates, round-trips, holds
// every member the schema declares (and no other), and every object of the
// schema is closed; a wrong member fails.
func TestIsolationSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "i.json")
	if err := result.WriteIsolationJSON(p, fullIsolation()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateIsolationDocument(b); err != nil {
		t.Fatal(err)
	}
	if !result.IsIsolationDocument(b) || result.IsCliffsDocument(b) {
		t.Error("kind not recognised")
	}
	d, err := result.ReadIsolation(b)
	if err != nil || *d.Attackers[0].Ratios[0].High != 2.5 || !d.Alone[0].P99_99.OK {
		t.Fatalf("%+v %v", d, err)
	}
	empty := filepath.Join(t.TempDir(), "e.json")
	if err := result.WriteIsolationJSON(empty, &result.IsolationDocument{Role: "loopback", Device: "rxe0", Repeat: 1, Confidence: 0.95,
		Start: time.Now(), End: time.Now(), Attackers: []result.IsolationAttacker{{Name: "bw-hog", Load: result.IsolationLoad{QPs: 2, Op: "write", SizeBytes: 65536, TxDepth: 128, Threads: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if eb, _ := os.ReadFile(empty); schema.ValidateIsolationDocument(eb) != nil {
		t.Errorf("minimal document: %v", schema.ValidateIsolationDocument(eb))
	}
	checkStandaloneSchema(t, "isolation.schema.json", result.IsolationSchemaJSON, b, 20)
	bad := strings.Replace(string(b), `"figure": "p99"`, `"figure": "p98"`, 1)
	if err := schema.ValidateIsolationDocument([]byte(bad)); err == nil {
		t.Error("bad figure validates")
	}
}
