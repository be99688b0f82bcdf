package resulttest

// The hostile corpus: real documents of every kind, and edits of them that
// no real run writes, each with the JSON path a reader must name when it
// refuses it (TestHostileDocuments in bench/result and cmd/rdmabench, the
// fuzz targets' seeds in bench/readers).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Hostile is a document that no real run writes: Data, an edit of a real
// document of Kind ("result", "mesh", "cliffs", "isolation", "doctor",
// "mr"), refused naming Path ("results[0].size_bytes").
type Hostile struct {
	Name string
	Kind string
	Path string
	Data []byte
}

// dir is this package's directory.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// RealFiles are the real documents kept in the repository, of every kind,
// by path relative to the module root.
func RealFiles(t testing.TB) map[string][]byte {
	t.Helper()
	root := filepath.Join(dir(), "..", "..", "..")
	out := map[string][]byte{}
	for _, pat := range []string{"bench/*/testdata/*.json", "bench/*/testdata/*/*.json", "bench/result/resulttest/testdata/*.json"} {
		files, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			out[filepath.ToSlash(rel)] = b
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d real documents found", len(out))
	}
	return out
}

// Base documents of each kind that the edits start from.
const (
	baseResult    = "bench/plot/testdata/a.json" // make demo's 18 tests, 5000 iterations each
	baseFull      = "bench/result/testdata/full.json"
	baseMesh      = "bench/result/testdata/mesh_tcp.json"
	baseCliffs    = "bench/result/resulttest/testdata/cliffs.json"
	baseIsolation = "bench/result/resulttest/testdata/isolation.json"
	baseDoctor    = "bench/result/testdata/doctor.json"
	baseMR        = "bench/result/testdata/full_mr.json"
)

// edit is one hostile change to a base document.
type edit struct {
	name, base, kind, path string
	apply                  func(doc any)
}

// set returns an edit function that sets the member at dotted path p
// ("results.0.size_bytes") to v.
func set(p string, v any) func(any) {
	return func(doc any) { setPath(doc, strings.Split(p, "."), v) }
}

func setPath(doc any, p []string, v any) {
	for len(p) > 1 {
		doc = child(doc, p[0])
		p = p[1:]
	}
	switch d := doc.(type) {
	case map[string]any:
		d[p[0]] = v
	case []any:
		i, _ := strconv.Atoi(p[0])
		d[i] = v
	}
}

func child(doc any, k string) any {
	switch d := doc.(type) {
	case map[string]any:
		return d[k]
	case []any:
		i, _ := strconv.Atoi(k)
		return d[i]
	}
	return nil
}

func get(doc any, p string) any {
	for _, k := range strings.Split(p, ".") {
		doc = child(doc, k)
	}
	return doc
}

// HostileDocuments returns the hostile corpus: at least 30 documents over
// every kind.
func HostileDocuments(t testing.TB) []Hostile {
	t.Helper()
	real := RealFiles(t)
	edits := []edit{
		// result documents
		{"negative size", baseResult, "result", "results[0].size_bytes", set("results.0.size_bytes", -5)},
		{"size past 1 GiB", baseResult, "result", "results[0].size_bytes", set("results.0.size_bytes", 1<<40)},
		{"count 0 with percentiles", baseResult, "result", "results[0].latency_ns.p50", set("results.0.latency_ns.count", 0)},
		{"unknown op", baseResult, "result", "results[0].op", set("results.0.op", "teleport")},
		{"unknown mode", baseResult, "result", "results[0].mode", set("results.0.mode", "fast")},
		{"negative bandwidth", baseResult, "result", "results[11].bandwidth.mb_per_s", set("results.11.bandwidth.mb_per_s", -100)},
		{"no results", baseResult, "result", "results", set("results", []any{})},
		{"the same test twice", baseResult, "result", "results[18]", func(d any) {
			m := d.(map[string]any)
			rs := m["results"].([]any)
			m["results"] = append(rs, rs[0])
		}},
		{"p99 below p50", baseResult, "result", "results[0].latency_ns.p99", set("results.0.latency_ns.p99", 1)},
		{"max below p99.9", baseResult, "result", "results[0].latency_ns.max", set("results.0.latency_ns.max", 5000)},
		{"negative iterations", baseResult, "result", "results[0].iterations", set("results.0.iterations", -1)},
		{"negative duration", baseResult, "result", "results[0].duration_ns", set("results.0.duration_ns", -1)},
		{"unknown QP type", baseFull, "result", "results[0].qp_type", set("results.0.qp_type", "XY")},
		{"histogram that does not decode", baseResult, "result", "results[0].histogram", set("results.0.histogram", "HISTFAAAAgarbage")},
		{"histogram that disagrees with samples", baseResult, "result", "results[0].histogram", set("results.0.samples", 7)},
		{"mean above max", baseResult, "result", "results[0].latency_ns.mean", set("results.0.latency_ns.mean", 1e12)},
		{"message rate past any link", baseResult, "result", "results[11].bandwidth.mpps", set("results.11.bandwidth.mpps", 1e9)},
		{"schema version 2", baseResult, "result", "schema_version", set("schema_version", 2)},
		{"unknown role", baseResult, "result", "role", set("role", "hacker")},
		{"link utilization negative", baseResult, "result", "results[0].link_utilization", set("results.0.link_utilization", -0.5)},
		{"unknown transport", baseResult, "result", "results[0].transport", set("results.0.transport", "pigeon")},
		{"negative stdev", baseResult, "result", "results[0].latency_ns.stdev", set("results.0.latency_ns.stdev", -3)},
		{"negative CPU count", baseResult, "result", "environment.num_cpu", set("environment.num_cpu", -1)},
		{"ends before it starts", baseResult, "result", "end_time", set("end_time", "2001-01-01T00:00:00Z")},
		{"latency of a century", baseResult, "result", "results[0].latency_ns.max", set("results.0.latency_ns.max", 3e18)},
		{"percentiles out of order", baseFull, "result", "results[0].latency_ns.percentiles[1].p", func(d any) {
			q := get(d, "results.0.latency_ns.percentiles").([]any)
			q[1].(map[string]any)["p"] = 1.0
		}},
		{"interval that ends before it starts", baseFull, "result", "results[0].intervals[0].end_ns", set("results.0.intervals.0.end_ns", -1)},
		{"min that is not the histogram's", baseResult, "result", "results[0].latency_ns.min", set("results.0.latency_ns.min", 1)},
		{"no iterations", baseResult, "result", "results[2].iterations", set("results.2.iterations", 0)},
		{"warm-up negative", baseResult, "result", "results[0].warmup_iterations", set("results.0.warmup_iterations", -7)},
		{"unknown MR mode", baseFull, "result", "results[0].mr_mode", set("results.0.mr_mode", "borrowed")},
		// mesh documents
		{"mesh: negative size", baseMesh, "mesh", "pairs[0].results[0].size_bytes", set("pairs.0.results.0.size_bytes", -1)},
		{"mesh: client rank out of range", baseMesh, "mesh", "pairs[0].client", set("pairs.0.client", 99)},
		{"mesh: no ranks", baseMesh, "mesh", "ranks", set("ranks", []any{})},
		{"mesh: unknown pattern", baseMesh, "mesh", "pattern", set("pattern", "star")},
		{"mesh: unknown pair status", baseMesh, "mesh", "pairs[0].status", set("pairs.0.status", "meh")},
		// cliffs documents
		{"cliffs: median above max", baseCliffs, "cliffs", "points[0].max", set("points.0.median", 5)},
		{"cliffs: unknown unit", baseCliffs, "cliffs", "figure_unit", set("figure_unit", "furlongs")},
		{"cliffs: knee off the curve", baseCliffs, "cliffs", "knees[0].before", set("knees.0.before", 3)},
		{"cliffs: falling ladder", baseCliffs, "cliffs", "ladder[1]", set("ladder.1", 1)},
		{"cliffs: point without runs", baseCliffs, "cliffs", "points[0].runs", set("points.0.runs", []any{})},
		{"cliffs: axis value of 2^40", baseCliffs, "cliffs", "points[1].value", set("points.1.value", 1<<40)},
		// isolation documents
		{"isolation: p99 below p50", baseIsolation, "isolation", "alone[0].p99", set("alone.0.p99", 1)},
		{"isolation: unknown figure", baseIsolation, "isolation", "attackers[0].ratios[0].figure", set("attackers.0.ratios.0.figure", "p77")},
		{"isolation: unknown verdict", baseIsolation, "isolation", "verdicts[0].verdict", set("verdicts.0.verdict", "maybe")},
		{"isolation: interval upside down", baseIsolation, "isolation", "attackers[0].ratios[0].high", set("attackers.0.ratios.0.high", 0.1)},
		// doctor documents
		{"doctor: unknown status", baseDoctor, "doctor", "findings[0].status", set("findings.0.status", "great")},
		{"doctor: status better than its findings", baseDoctor, "doctor", "status", func(d any) {
			set("findings.0.status", "fail")(d)
			set("status", "pass")(d)
		}},
		// mr documents
		{"mr: negative buffer size", baseMR, "mr", "mr.registration[0].size_bytes", set("mr.registration.0.size_bytes", -1)},
		{"mr: max below p99.9", baseMR, "mr", "mr.registration[0].reg_ns.max", set("mr.registration.0.reg_ns.max", 100)},
		{"mr: negative rate", baseMR, "mr", "mr.ops.pooled.ops_per_s", set("mr.ops.pooled.ops_per_s", -1)},
	}
	var out []Hostile
	for _, e := range edits {
		b, ok := real[e.base]
		if !ok {
			t.Fatalf("%s: no base document %s", e.name, e.base)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", e.base, err)
		}
		e.apply(doc)
		data, err := json.MarshalIndent(doc, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Hostile{Name: e.name, Kind: e.kind, Path: e.path, Data: data})
	}
	return out
}
