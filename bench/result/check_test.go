package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadChecksValues: a document whose values no measurement produces is
// refused on reading, the field named by its JSON path; each case passes
// without its change.
func TestReadChecksValues(t *testing.T) {
	base, err := os.ReadFile("testdata/guest/load.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(r map[string]any)
		path   string // "" : no error
		says   string
	}{
		{"as recorded", func(map[string]any) {}, "", ""},
		{"negative min", func(r map[string]any) { lat(r)["min"] = -1.0 }, "results[0].latency_ns.min", "negative latency -1 ns"},
		{"negative mean", func(r map[string]any) { lat(r)["mean"] = -5.0 }, "results[0].latency_ns.mean", "negative latency"},
		{"p50 above p90", func(r map[string]any) { lat(r)["p50"] = 30000.0 }, "results[0].latency_ns.p90", "24639.5 ns is below p50's 30000 ns"},
		{"min above p50", func(r map[string]any) { lat(r)["min"] = 20000.0 }, "results[0].latency_ns.p50", "below min's 20000"},
		{"max below p99", func(r map[string]any) { lat(r)["max"] = 100.0 }, "results[0].latency_ns.max", "below p99's"},
		{"p99 above p99.99, p99.9 n/a", func(r map[string]any) { lat(r)["p99_99"] = 4000000.0 }, "results[0].latency_ns.p99_99", "below p99's"},
		{"n/a percentiles skipped", func(r map[string]any) { lat(r)["p90"] = nil; lat(r)["p99"] = nil }, "", ""},
		{"histogram that does not decode", func(r map[string]any) { r["histogram"] = "HISTFAAAAnotbase64!" }, "results[0].histogram", "does not decode"},
		{"interval p99 below p50", func(r map[string]any) {
			r["intervals"] = []any{map[string]any{"start_ns": 0, "end_ns": 1, "ops": 1, "p50_ns": 10.0, "p99_ns": 5.0}}
		}, "results[0].intervals[0].p99_ns", "below p50_ns's"},
		{"rtt out of order", func(r map[string]any) {
			r["rtt_ns"] = map[string]any{"count": 2, "min": 10.0, "max": 1.0, "mean": 5.0, "stdev": 0.0}
		}, "results[0].rtt_ns.max", "below min's"},
	}
	for _, c := range cases {
		var doc map[string]any
		if err := json.Unmarshal(base, &doc); err != nil {
			t.Fatal(err)
		}
		c.change(doc["results"].([]any)[0].(map[string]any))
		b, _ := json.Marshal(doc)
		p := filepath.Join(t.TempDir(), "doc.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadJSONFile(p)
		if c.path == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Path != c.path || !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %s: ...%s (and the file named)", c.name, err, c.path, c.says)
		}
	}
}

func lat(r map[string]any) map[string]any { return r["latency_ns"].(map[string]any) }

// TestReadMeshChecksValues: a mesh pair's result with percentiles out of
// order is refused, the pair and field named.
func TestReadMeshChecksValues(t *testing.T) {
	b, err := os.ReadFile("testdata/mesh_tcp.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMesh(b, "ok"); err != nil {
		t.Fatal(err)
	}
	r := doc["pairs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)
	lat(r)["min"] = -3.0
	b, _ = json.Marshal(doc)
	var ve *ValueError
	if _, err := ParseMesh(b, "bad"); !errors.As(err, &ve) || ve.Path != "pairs[0].results[0].latency_ns.min" {
		t.Errorf("got %v, want pairs[0].results[0].latency_ns.min named", err)
	}
}

// TestCheckHistogramResolution: a run whose samples are all one value has
// exact min and max and a histogram mean a bucket away (54384 against
// 54383, seen in the guest): not an impossible document.
func TestCheckHistogramResolution(t *testing.T) {
	var c checker
	l := Latency{Count: 10, Min: 54383, Max: 54383, Mean: 54384, P50: Nanos{NS: 54384, OK: true}, P99: Nanos{NS: 54384, OK: true}}
	c.latency("results[0].latency_ns", &l)
	if c.err != nil {
		t.Fatalf("a mean and percentiles one bucket off the exact min and max: %v", c.err)
	}
	l.Mean = 60000
	c.latency("results[0].latency_ns", &l)
	if c.err == nil {
		t.Fatal("a mean 10 % over the max was accepted")
	}
}
