package result_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// fullCliffs is a cliffs document with every member set.
func fullCliffs() *result.CliffsDocument {
	up := 8
	return &result.CliffsDocument{ToolVersion: "test", CommandLine: []string{"rdmabench", "cliffs"},
		Start: time.Unix(1e9, 0).UTC(), End: time.Unix(1e9+60, 0).UTC(), Role: "client", Peer: "192.0.2.1:18515",
		Device: "rxe0", Test: "write bw 64B", Axis: "qps", Figure: "mpps", FigureUnit: "Mpps",
		Ladder: []int{1, 2, 4, 8}, Runs: 3, RunDurationNS: 1e9, MaxBisections: 3, MaxPoints: 10, MinDrop: 0.2,
		Confidence: 0.95, EstimatedNS: 50e9, ElapsedNS: 40e9,
		Points: []result.CliffsPoint{
			{Value: 4, Stage: result.StageLadder, Runs: []float64{1, 1.1, 0.9}, Median: 1, Min: 0.9, Max: 1.1, Iterations: 3000,
				Counters:          &result.CliffsCounters{Client: map[string]int64{"hw_counters/rcvd_pkts": 1000}, Server: map[string]int64{"hw_counters/sent_pkts": 1000}},
				CounterIterations: 1000},
			{Value: 6, Stage: result.StageBisection, Runs: []float64{0.5}, Median: 0.5, Min: 0.5, Max: 0.5, Iterations: 1000},
		},
		Knees: []result.CliffsKnee{{Before: 4, After: 6, FigureBefore: 1, FigureAfter: 0.5, Drop: 0.5, DropCI: &result.DropInterval{0.4, 0.6},
			LadderBefore: 4, LadderAfter: 8,
			Counters: []result.CliffsCounter{{Side: "client", Name: "hw_counters/retry_exceeded_err", PerOpBefore: 0, PerOpAfter: 0.01, Trouble: result.TroubleRetransmissions}}}},
		NoKneeUpTo: &up, Partial: true, Warnings: []string{"w"}}
}

func writeCliffs(t *testing.T, d *result.CliffsDocument) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.json")
	if err := result.WriteCliffsJSON(p, d); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCliffsSchema: the encoder's output validates, round-trips, holds
// every member the schema declares (and no other), and every object of
// the schema is closed; a wrong member fails.
func TestCliffsSchema(t *testing.T) {
	b := writeCliffs(t, fullCliffs())
	if err := schema.ValidateCliffsDocument(b); err != nil {
		t.Fatal(err)
	}
	if !result.IsCliffsDocument(b) || result.IsMeshDocument(b) {
		t.Error("kind not recognised")
	}
	d, err := result.ReadCliffs(b)
	if err != nil || d.Knees[0].DropCI.High != 0.6 || *d.NoKneeUpTo != 8 {
		t.Fatalf("%+v %v", d, err)
	}
	empty := writeCliffs(t, &result.CliffsDocument{Role: "loopback", Device: "rxe0", Axis: "size", Figure: "p50", FigureUnit: "ns",
		Runs: 1, MaxPoints: 1, MinDrop: 0.2, Confidence: 0.95, Start: time.Now(), End: time.Now()})
	if err := schema.ValidateCliffsDocument(empty); err != nil {
		t.Errorf("minimal document: %v", err)
	}
	checkStandaloneSchema(t, "cliffs.schema.json", result.CliffsSchemaJSON, b, 20)
	bad := strings.Replace(string(b), `"axis": "qps"`, `"axis": "colour"`, 1)
	if err := schema.ValidateCliffsDocument([]byte(bad)); err == nil || !strings.Contains(err.Error(), "/axis") {
		t.Errorf("bad axis: %v", err)
	}
}

// checkStandaloneSchema checks that doc (an encoded document with every
// member set) holds every member schemaJSON (a schema without $refs to
// other files, named name) declares and no other, that the schema has at
// least minPaths of them, and that every object of the schema is closed.
func checkStandaloneSchema(t *testing.T, name string, schemaJSON, doc []byte, minPaths int) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	docs := map[string]schemaDoc{name: {name, root}}
	want, got := map[string]bool{}, map[string]bool{}
	schemaPaths(t, docs, subschema{name, root}, "", want)
	docPaths(v, "", got)
	var missing, extra []string
	for p := range want {
		if !got[p] && !strings.HasSuffix(p, ".*") {
			missing = append(missing, p)
		}
	}
	for p := range got {
		if !want[wildcardPath(p, want)] {
			extra = append(extra, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 || len(want) < minPaths {
		t.Errorf("schema paths %d; the document lacks %v; the schema lacks %v", len(want), missing, extra)
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "object" && v["additionalProperties"] != false {
				t.Errorf("%s#%s: object without additionalProperties false", name, at)
			}
			for k, e := range v {
				walk(e, at+"/"+k)
			}
		case []any:
			for _, e := range v {
				walk(e, at+"/[]")
			}
		}
	}
	walk(root, "")
}
