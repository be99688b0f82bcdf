package bench

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
	"time"

	"github.com/rdmabench/rdmabench/hist"
)

// testHist returns a histogram holding vals (ns).
func testHist(t *testing.T, vals ...int64) *hist.Histogram {
	t.Helper()
	h := hist.New()
	for _, v := range vals {
		h.Record(v)
	}
	return h
}

// testDocument returns a document with one SEND latency result (RTT/2, from
// 1000 round trips: p99.9 backed, p99.99 not) and one bandwidth result.
func testDocument(t *testing.T) *Document {
	t.Helper()
	h := hist.New()
	for i := int64(1); i <= 1000; i++ {
		h.Record(9000 + i)
	}
	h.Record(177001) // the true max, odd so RTT/2 is fractional
	lat := Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: 1001, Warmup: 100, DurationNS: 10_500_000,
		TimedInterval: "half of a SEND/RECV ping-pong round trip (RTT/2)", TxDepth: 1, CQMod: 1, RxDepth: 1,
		Bandwidth: NewBandwidth(2, 1001, 10_500_000)}
	if err := lat.SetLatency(h, 2); err != nil {
		t.Fatal(err)
	}
	bw := Result{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: 5000, DurationNS: 1e9,
		TimedInterval: "post to completion of a signaled work request", TxDepth: 128, CQMod: 100, RxDepth: 512,
		Bandwidth: NewBandwidth(65536, 5000, 1e9),
		Intervals: []Interval{{StartNS: 0, EndNS: 5e8, Ops: 2500, Bandwidth: NewBandwidth(65536, 2500, 5e8),
			P50: Nanos{NS: 4100, OK: true}}}}
	if err := bw.SetLatency(testHist(t, 4000, 4100, 4200, 90000), 1); err != nil {
		t.Fatal(err)
	}
	return &Document{
		SchemaVersion: SchemaVersion, Tool: "rdmabench", ToolVersion: "v0.1.0",
		CommandLine: []string{"rdmabench", "run", "--ops", "send,write"},
		Start:       time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC),
		End:         time.Date(2026, 3, 4, 5, 6, 9, 0, time.UTC),
		Role:        "loopback",
		Env:         testEnv(),
		Results:     []Result{lat, bw},
		Warnings:    []string{SoftwareRDMANote("rxe0", "rdma_rxe")},
	}
}

func testEnv() Env {
	return Env{Host: "vm", Kernel: "6.8.0 #1 SMP", RDMACoreVersion: "44.0", Device: "rxe0", Driver: "rdma_rxe",
		Firmware: "0.0.0", VendorID: 0xffffff, SoftwareRDMA: true, SoftwareRDMANote: SoftwareRDMANote("rxe0", "rdma_rxe"),
		Port: 1, LinkLayer: "Ethernet", ActiveMTU: 4096, PathMTU: 4096, LinkSpeed: "2.5 Gbps", LinkGbps: 2.5,
		GIDIndex: 1, GIDType: "RoCE v2", GID: "::ffff:127.0.0.1", GIDReason: "RoCE v2 GID matching the local address 127.0.0.1",
		InlineSizeGranted: 0, QPType: "RC", ClockSource: "CLOCK_MONOTONIC_RAW", ClockRateHz: 1e9, ClockResolutionNS: 1,
		CPUModel: "AMD EPYC", NumCPU: 4, GoVersion: "go1.26.8", EnginePinnedCPU: -1}
}

func TestResultJSONRoundTrip(t *testing.T) {
	doc := testDocument(t)
	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteJSONFile(path, doc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	got, err := ReadJSONFile(path)
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
	if got.Results[0].Samples != 1001 || got.Results[1].Samples != 4 {
		t.Errorf("samples %d, %d; want 1001, 4", got.Results[0].Samples, got.Results[1].Samples)
	}
}

func TestResultJSONKeys(t *testing.T) {
	b, err := json.Marshal(testDocument(t))
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
			"p50", "p90", "p99", "p99_9", "p99_99", "max")},
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
	doc := testDocument(t)
	r := doc.Results[0]
	if r.RTT == nil || doc.Results[1].RTT != nil {
		t.Fatalf("rtt_ns must be set for RTT/2 results only")
	}
	if r.Latency.Max != 88500.5 || r.RTT.Max != 177001 {
		t.Errorf("max %v (rtt %v); want the true max 88500.5 (177001)", r.Latency.Max, r.RTT.Max)
	}
	if r.Latency.Min != 4500.5 {
		t.Errorf("min %v, want 4500.5", r.Latency.Min)
	}
	for _, p := range [][2]Nanos{{r.Latency.P50, r.RTT.P50}, {r.Latency.P99, r.RTT.P99}, {r.Latency.P99_9, r.RTT.P99_9}} {
		if !p[0].OK || p[0].NS != p[1].NS/2 {
			t.Errorf("percentile of RTT/2 %v is not half that of RTT %v", p[0], p[1])
		}
	}
	if r.Latency.P99_99.OK {
		t.Errorf("p99.99 of 1001 samples is %v, want n/a", r.Latency.P99_99)
	}
	if math.Abs(r.Latency.Mean*2-r.RTT.Mean) > 1e-6 || math.Abs(r.Latency.Stdev*2-r.RTT.Stdev) > 1e-6 {
		t.Errorf("mean/stdev not halved: %v/%v vs %v/%v", r.Latency.Mean, r.Latency.Stdev, r.RTT.Mean, r.RTT.Stdev)
	}
}

func TestLatencyNAIsNull(t *testing.T) {
	l := NewLatency(testHist(t, 1000, 2000, 3000), 1)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":3,"min":1000,"mean":2000.3333333333335,"stdev":816.9048632218781,"p50":2000,"p90":null,"p99":null,"p99_9":null,"p99_99":null,"max":3000}`
	if string(b) != want {
		t.Errorf("unexpected JSON:\n got  %s\n want %s", b, want)
	}
	var back Latency
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, l) {
		t.Errorf("round trip: got %+v, want %+v", back, l)
	}
}

func TestLatencyEmpty(t *testing.T) {
	l := NewLatency(hist.New(), 2)
	if (l != Latency{}) {
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
		want Nanos
		out  string
	}{
		{"null", "null", Nanos{}, "null"},
		{"integer", "4210", Nanos{NS: 4210, OK: true}, "4210"},
		{"fraction", "750.5", Nanos{NS: 750.5, OK: true}, "750.5"},
		{"exponent", "1e3", Nanos{NS: 1000, OK: true}, "1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n Nanos
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
	var n Nanos
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
		want  Bandwidth
		exact bool
	}{
		{"1MiB x 1000 in 1s", 1 << 20, 1000, 1e9, Bandwidth{MBPerSec: 1048.576, MiBPerSec: 1000, GbitPerSec: 8.388608, Mpps: 0.001}, false},
		{"2B x 1e6 in 0.5s", 2, 1e6, 5e8, Bandwidth{MBPerSec: 4, MiBPerSec: 4e6 / (1 << 20), GbitPerSec: 0.032, Mpps: 2}, false},
		{"zero duration", 64, 10, 0, Bandwidth{}, true},
		{"negative duration", 64, 10, -5, Bandwidth{}, true},
		{"no messages", 64, 0, 1e9, Bandwidth{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NewBandwidth(tc.size, tc.msgs, tc.ns)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !near(got.MBPerSec, tc.want.MBPerSec) || !near(got.MiBPerSec, tc.want.MiBPerSec) ||
				!near(got.GbitPerSec, tc.want.GbitPerSec) || !near(got.Mpps, tc.want.Mpps) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	b := NewBandwidth(1<<20, 1000, 1e9)
	for unit, want := range map[string]string{UnitMiB: "MiB/sec", UnitMB: "MB/sec", UnitGb: "Gb/sec"} {
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
		{"no schema", `{"tool": "perftest"}`, "not an rdmabench result"},
		{"not json", `#bytes`, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadJSONFile(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := ReadJSONFile(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestResultWriteJSONFileDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "min.json")
	doc := &Document{Role: "loopback"}
	if err := WriteJSONFile(path, doc); err != nil {
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
	if err := WriteJSONFile(filepath.Join(path, "sub"), doc); err == nil {
		t.Error("writing below a regular file did not fail")
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Error("a failed write changed another file")
	}
}
