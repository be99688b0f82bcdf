package result_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
	"github.com/rdmabench/rdmabench/internal/golden"

	"github.com/rdmabench/rdmabench/hist"
)

func TestResultJSONRoundTrip(t *testing.T) {
	doc := resulttest.Document(t)
	path := filepath.Join(t.TempDir(), "out.json")
	if err := result.WriteJSONFile(path, doc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	got, err := result.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, doc) {
		a, _ := json.MarshalIndent(doc, "", " ")
		b, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("round trip differs:\nwant %s\ngot  %s", a, b)
	}

	// The histograms decode to the recorded samples.
	for _, r := range got.Results {
		h, err := r.DecodeHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h.Count() != r.Samples || h.Count() != r.Latency.Count {
			t.Errorf("%s: histogram has %d values, samples %d, latency count %d", r.Op, h.Count(), r.Samples, r.Latency.Count)
		}
		p50, _ := h.Percentile(50)
		if want := float64(p50) / r.HistogramDivisor; r.Latency.P50.NS != want {
			t.Errorf("%s: p50 %v, decoded histogram p50/%v = %v", r.Op, r.Latency.P50.NS, r.HistogramDivisor, want)
		}
	}
	if got.Results[0].Samples != 4001 || got.Results[1].Samples != 7 {
		t.Errorf("samples %d, %d; want 4001, 7", got.Results[0].Samples, got.Results[1].Samples)
	}
}

func TestResultJSONKeys(t *testing.T) {
	b, err := json.Marshal(resulttest.Document(t))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) []string {
		var k []string
		for s := range v.(map[string]any) {
			k = append(k, s)
		}
		slices.Sort(k)
		return k
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	for _, tc := range []struct {
		name string
		v    any
		want []string
	}{
		{"document", m, sorted("schema_version", "tool", "tool_version", "command_line", "start_time", "end_time",
			"role", "environment", "peak_rss_bytes", "results", "warnings")},
		{"environment", m["environment"], sorted("host", "kernel", "rdma_core_version", "device", "driver", "firmware",
			"vendor_id", "vendor_part_id", "software_rdma", "software_rdma_note", "port", "link_layer", "active_mtu",
			"path_mtu", "link_speed", "link_gbps", "gid_index", "gid_type", "gid", "gid_reason", "inline_size_granted",
			"qp_type", "clock_source", "clock_rate_hz", "clock_read_cost_ns", "clock_resolution_ns", "cpu_model", "num_cpu", "go_version",
			"engine_pinned_cpu", "kernel_clocksource", "checks")},
		{"result", m["results"].([]any)[0], sorted("op", "mode", "size_bytes", "iterations", "warmup_iterations",
			"duration_ns", "timed_interval", "tx_depth", "cq_mod", "rx_depth", "inline_bytes", "latency_ns", "rtt_ns",
			"bandwidth", "histogram", "histogram_divisor", "samples", "link_utilization")},
		{"latency_ns", m["results"].([]any)[0].(map[string]any)["latency_ns"], sorted("count", "min", "mean", "stdev",
			"p50", "p90", "p99", "p99_9", "p99_99", "max", "confidence", "percentiles")},
		{"bandwidth", m["results"].([]any)[0].(map[string]any)["bandwidth"], sorted("mb_per_s", "mib_per_s",
			"gbit_per_s", "mpps")},
		{"interval", m["results"].([]any)[1].(map[string]any)["intervals"].([]any)[0], sorted("start_ns", "end_ns",
			"ops", "bandwidth", "p50_ns", "p99_ns")},
	} {
		if got := keys(tc.v); !slices.Equal(got, tc.want) {
			t.Errorf("%s keys:\n got  %v\n want %v", tc.name, got, tc.want)
		}
	}
}

func TestLatencyRTTHalf(t *testing.T) {
	doc := resulttest.Document(t)
	r := doc.Results[0]
	if r.RTT == nil || doc.Results[1].RTT != nil {
		t.Fatalf("rtt_ns must be set for RTT/2 results only")
	}
	if r.Latency.Max != 88500.5 || r.RTT.Max != 177001 {
		t.Errorf("max %v (rtt %v); want the true max 88500.5 (177001)", r.Latency.Max, r.RTT.Max)
	}
	if r.Latency.Min != 4500 { // 9000/2
		t.Errorf("min %v, want 4500", r.Latency.Min)
	}
	for _, p := range [][2]result.Nanos{{r.Latency.P50, r.RTT.P50}, {r.Latency.P99, r.RTT.P99}, {r.Latency.P99_9, r.RTT.P99_9}} {
		if !p[0].OK || p[0].NS != p[1].NS/2 {
			t.Errorf("percentile of RTT/2 %v is not half that of RTT %v", p[0], p[1])
		}
	}
	if r.Latency.P99_99.OK {
		t.Errorf("p99.99 of 4001 samples is %v, want n/a", r.Latency.P99_99)
	}
	if math.Abs(r.Latency.Mean*2-r.RTT.Mean) > 1e-6 || math.Abs(r.Latency.Stdev*2-r.RTT.Stdev) > 1e-6 {
		t.Errorf("mean/stdev not halved: %v/%v vs %v/%v", r.Latency.Mean, r.Latency.Stdev, r.RTT.Mean, r.RTT.Stdev)
	}
}

func TestLatencyNAIsNull(t *testing.T) {
	l := result.NewLatency(resulttest.Hist(t, 1000, 2000, 3000, 1500, 2500, 2200), 1)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":6,"min":1000,"mean":2033.8333333333333,"stdev":650.1967437288159,"p50":2000,"p90":null,"p99":null,"p99_9":null,"p99_99":null,"max":3000,` +
		`"confidence":0.95,"percentiles":[{"p":50,"value":2000,"ci_low":1000,"ci_high":3000},{"p":90,"value":null,"ci_low":null,"ci_high":null},` +
		`{"p":99,"value":null,"ci_low":null,"ci_high":null},{"p":99.9,"value":null,"ci_low":null,"ci_high":null},{"p":99.99,"value":null,"ci_low":null,"ci_high":null}]}`
	if string(b) != want {
		t.Errorf("unexpected JSON:\n got  %s\n want %s", b, want)
	}
	var back result.Latency
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, l) {
		t.Errorf("round trip: got %+v, want %+v", back, l)
	}
}

func TestLatencyEmpty(t *testing.T) {
	l := result.NewLatency(hist.New(), 2)
	if !reflect.DeepEqual(l, result.Latency{}) {
		t.Errorf("empty histogram: %+v, want the zero Latency", l)
	}
	if _, err := json.Marshal(l); err != nil {
		t.Error(err)
	}
}

func TestLatencyNanosJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want result.Nanos
		out  string
	}{
		{"null", "null", result.Nanos{}, "null"},
		{"integer", "4210", result.Nanos{NS: 4210, OK: true}, "4210"},
		{"fraction", "750.5", result.Nanos{NS: 750.5, OK: true}, "750.5"},
		{"exponent", "1e3", result.Nanos{NS: 1000, OK: true}, "1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n result.Nanos
			if err := json.Unmarshal([]byte(tc.in), &n); err != nil {
				t.Fatal(err)
			}
			if n != tc.want {
				t.Errorf("decoded %+v, want %+v", n, tc.want)
			}
			b, _ := json.Marshal(n)
			if string(b) != tc.out {
				t.Errorf("encoded %s, want %s", b, tc.out)
			}
		})
	}
	var n result.Nanos
	if err := json.Unmarshal([]byte(`"12"`), &n); err == nil {
		t.Error("a string decoded as Nanos")
	}
}

func TestBandwidth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int
		msgs  int64
		ns    int64
		want  result.Bandwidth
		exact bool
	}{
		{"1MiB x 1000 in 1s", 1 << 20, 1000, 1e9, result.Bandwidth{MBPerSec: 1048.576, MiBPerSec: 1000, GbitPerSec: 8.388608, Mpps: 0.001}, false},
		{"2B x 1e6 in 0.5s", 2, 1e6, 5e8, result.Bandwidth{MBPerSec: 4, MiBPerSec: 4e6 / (1 << 20), GbitPerSec: 0.032, Mpps: 2}, false},
		{"zero duration", 64, 10, 0, result.Bandwidth{}, true},
		{"negative duration", 64, 10, -5, result.Bandwidth{}, true},
		{"no messages", 64, 0, 1e9, result.Bandwidth{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := result.NewBandwidth(tc.size, tc.msgs, tc.ns)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !near(got.MBPerSec, tc.want.MBPerSec) || !near(got.MiBPerSec, tc.want.MiBPerSec) ||
				!near(got.GbitPerSec, tc.want.GbitPerSec) || !near(got.Mpps, tc.want.Mpps) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	b := result.NewBandwidth(1<<20, 1000, 1e9)
	for unit, want := range map[string]string{result.UnitMiB: "MiB/sec", result.UnitMB: "MB/sec", result.UnitGb: "Gb/sec"} {
		if _, label, err := b.In(unit); err != nil || label != want {
			t.Errorf("In(%q): label %q, err %v; want %q", unit, label, err, want)
		}
	}
	if _, _, err := b.In("KB"); err == nil {
		t.Error(`In("KB") did not fail`)
	}
}

func TestResultReadJSONFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"newer schema", `{"schema_version": 2, "tool": "rdmabench"}`, "schema version 2"},
		{"no schema", `{"tool": "perftest"}`, "not an rdmabench document (no schema_version)"},
		{"not json", `#bytes`, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := result.ReadJSONFile(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := result.ReadJSONFile(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestResultWriteJSONFileDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "min.json")
	doc := &result.Document{Role: "loopback"}
	if err := result.WriteJSONFile(path, doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 0 || doc.Tool != "" {
		t.Error("WriteJSONFile modified its argument")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema_version": 1`, `"tool": "rdmabench"`, `"results": []`, `"command_line": []`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output lacks %s:\n%s", want, b)
		}
	}
	if err := result.WriteJSONFile(filepath.Join(path, "sub"), doc); err == nil {
		t.Error("writing below a regular file did not fail")
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Error("a failed write changed another file")
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		name string
		key  result.Key
		want string
	}{
		{"rdma", result.NewKey("send", "lat", 2, ""), "send lat 2B"},
		{"rdma spelled out", result.NewKey("send", "lat", 2, result.TransportRDMA), "send lat 2B"},
		{"tcp", result.NewKey("send", "bw", 65536, result.TransportTCP), "tcp send bw 64K"},
		{"not a binary unit", result.NewKey("write", "lat", 1000, ""), "write lat 1000B"},
		{"megabyte", result.NewKey("read", "bw", 1<<20, ""), "read bw 1M"},
		{"3K", result.NewKey("read", "bw", 3072, ""), "read bw 3K"},
	}
	for _, tc := range tests {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	r := result.Result{Op: "read", Mode: "bw", SizeBytes: 4096, Transport: result.TransportRDMA}
	if got := result.KeyOf(&r); got != (result.Key{Op: "read", Mode: "bw", SizeBytes: 4096}) {
		t.Errorf("KeyOf = %+v", got)
	}
}

// TestDocumentGolden pins the JSON document's shape and encoding: field
// names, order, null percentiles and number formats of a fixed document.
func TestDocumentGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.json")
	if err := result.WriteJSONFile(path, resulttest.Document(t)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "document.golden.json", b)
}

func TestSoftwareRDMANote(t *testing.T) {
	tests := []struct {
		name, device, driver, netdev string
		same                         bool
		want                         string
	}{
		{"loopback", "rxe0", "rdma_rxe", "lo", true, "software RDMA (rxe, both ends on rxe0): not representative of hardware; same-device loopback bypasses the netdev"},
		{"wire", "rxe2", "rdma_rxe", "eth0", false, "software RDMA (rxe over eth0): not representative of hardware; the kernel's RDMA stack over that netdev"},
		{"unknown", "siw1", "siw", "", false, "software RDMA (siw): not representative of hardware"},
	}
	for _, tc := range tests {
		if got := result.SoftwareRDMANote(tc.device, tc.driver, tc.netdev, tc.same); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
