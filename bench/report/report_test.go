package report

import (
	"bytes"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
	"github.com/rdmabench/rdmabench/internal/golden"

	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/hist"
)

// unwrap joins the lines Note continued.
func unwrap(s string) string { return strings.ReplaceAll(s, "\n  ", " ") }

// golden compares got with testdata/name (see internal/golden).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, got)
}

// reportResults are fixed results: a SEND latency with 1e6 samples (all
// percentiles backed, a true max far above p99.99), a WRITE latency with
// 1000 samples (p99.99 n/a), a READ latency of 50 samples (p99 and above
// n/a) and an empty one.
func reportResults() []result.Result {
	ok := func(ns float64) result.Nanos { return result.Nanos{NS: ns, OK: true} }
	return []result.Result{
		{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: 1_000_000,
			TimedInterval: "half of a SEND/RECV ping-pong round trip (RTT/2)",
			Latency: result.Latency{Count: 1_000_000, Min: 4210.5, Mean: 5120.25, Stdev: 803.4, P50: ok(5030), P90: ok(5810.5),
				P99: ok(7990), P99_9: ok(15020), P99_99: ok(40110.5), Max: 1_234_567.5},
			RTT: &result.Latency{Count: 1_000_000}},
		{Op: "send", Mode: "lat", SizeBytes: 4096, Iterations: 1000,
			TimedInterval: "half of a SEND/RECV ping-pong round trip (RTT/2)",
			Latency: result.Latency{Count: 1000, Min: 9000.5, Mean: 9800, Stdev: 120.75, P50: ok(9750), P90: ok(9990),
				P99: ok(11200), P99_9: ok(88000.5), Max: 88500.5},
			RTT: &result.Latency{Count: 1000}},
		{Op: "write", Mode: "lat", SizeBytes: 64, Iterations: 1000,
			TimedInterval: "half of a WRITE ping-pong round trip, polling the last byte (RTT/2)",
			Latency: result.Latency{Count: 1000, Min: 3995, Mean: 4400, Stdev: 95, P50: ok(4380), P90: ok(4500),
				P99: ok(5000), P99_9: ok(9000), Max: 61000},
			RTT: &result.Latency{Count: 1000}},
		{Op: "read", Mode: "lat", SizeBytes: 64, Iterations: 50,
			TimedInterval: "a full READ round trip (RTT)",
			Latency:       result.Latency{Count: 50, Min: 8000, Mean: 8500, Stdev: 300, P50: ok(8490), P90: ok(9000), Max: 9900}},
		{Op: "fetch_add", Mode: "lat", SizeBytes: 8, TimedInterval: "a full atomic FETCH_ADD round trip (RTT)"},
	}
}

func TestReportLatencyTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLatencyTable(&b, reportResults(), Width); err != nil {
		t.Fatal(err)
	}
	b.WriteString("--wide:\n")
	if err := WriteLatencyTable(&b, reportResults(), 0); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "latency_table.golden", b.Bytes())
	def, wide, _ := strings.Cut(b.String(), "--wide:\n")
	for _, want := range []string{"1234.57", "max[usec]", "p50[usec]  p90[usec]  p99[usec]  p99.9[usec]  p99.99[usec]", "n/a", "not shown: mean, stdev (to fit 120 columns)"} {
		if !strings.Contains(def, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	for _, want := range []string{"mean[usec]  stdev[usec]", "5.12"} {
		if !strings.Contains(wide, want) || strings.Contains(wide, "not shown") {
			t.Errorf("--wide table lacks %q, or leaves a column out", want)
		}
	}
	for _, l := range strings.Split(def, "\n") {
		if len(l) > Width {
			t.Errorf("%d columns: %s", len(l), l)
		}
	}
}

func TestReportBandwidthTable(t *testing.T) {
	ok := func(ns float64) result.Nanos { return result.Nanos{NS: ns, OK: true} }
	results := []result.Result{
		{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: 100_000, Bandwidth: result.NewBandwidth(65536, 100_000, 2_500_000_000),
			Latency: result.Latency{Count: 1000, P50: ok(150_000), P99: ok(210_500.5)}},
		{Op: "send", Mode: "bw", SizeBytes: 2, Iterations: 5_000_000, Bandwidth: result.NewBandwidth(2, 5_000_000, 4_000_000_000),
			Latency: result.Latency{Count: 50_000, P50: ok(6100), P99: ok(9000)}},
		{Op: "read", Mode: "bw", SizeBytes: 1048576, Iterations: 40, Bandwidth: result.NewBandwidth(1048576, 40, 160_000_000),
			Latency: result.Latency{Count: 40, P50: ok(4_000_000)}},
	}
	var b bytes.Buffer
	for _, unit := range []string{result.UnitMiB, result.UnitMB, result.UnitGb} {
		b.WriteString("unit " + unit + ":\n")
		if err := WriteBandwidthTable(&b, results, unit, Width); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, "bandwidth_table.golden", b.Bytes())
	if err := WriteBandwidthTable(&b, results, "KB", Width); err == nil {
		t.Error(`unit "KB" accepted`)
	}
}

func TestReportHeader(t *testing.T) {
	var b bytes.Buffer
	doc := &result.Document{Role: "loopback", Env: resulttest.Env()}
	if err := WriteHeader(&b, doc); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "header.golden", b.Bytes())

	// Hardware: no banner; the active MTU stands in until the path MTU is known.
	b.Reset()
	doc.Results = []result.Result{{Op: result.OpSend, Mode: result.ModeLat, SizeBytes: 2, Inline: 64}}
	doc.Env = result.Env{Device: "mlx5_0", LinkLayer: "InfiniBand", ActiveMTU: 4096, GIDIndex: 0, QPType: "RC",
		InlineSizeGranted: 220, ClockSource: "CLOCK_MONOTONIC_RAW"}
	if err := WriteHeader(&b, doc); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{" Mtu             : 4096[B]\n", " GID index       : 0\n", " Max inline data : 64[B] (the device grants up to 220[B])\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("header lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "***") {
		t.Errorf("hardware header has a software banner:\n%s", out)
	}
}

func TestReportIntervalLine(t *testing.T) {
	iv := result.Interval{StartNS: 1e9, EndNS: 2e9, Ops: 20000, Bandwidth: result.NewBandwidth(65536, 20000, 1e9),
		P50: result.Nanos{NS: 4100, OK: true}}
	var b bytes.Buffer
	if err := WriteIntervalLine(&b, iv, result.UnitMiB); err != nil {
		t.Fatal(err)
	}
	want := "[  1.00-  2.00 s]     1250.00 MiB/sec   0.020000 Mpps  p50     4.10 usec  p99      n/a usec\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
	if err := WriteIntervalLine(&b, iv, "bits"); err == nil {
		t.Error(`unit "bits" accepted`)
	}
}

func TestReportFormatUS(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"hist value", FormatUS(histValue(46210, true)), "46.21"},
		{"hist n/a", FormatUS(histValue(0, false)), "n/a"},
		{"nanos fraction", result.Nanos{NS: 750.5, OK: true}.US(), "0.75"},
		{"nanos rounding", result.Nanos{NS: 1999.999, OK: true}.US(), "2.00"},
		{"nanos n/a", result.Nanos{}.US(), "n/a"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func histValue(ns int64, ok bool) hist.Value { return hist.Value{NS: ns, OK: ok} }

func TestConnectionTable(t *testing.T) {
	c := &result.ConnSetup{Method: result.ConnRDMACM, QPs: 3, SetupNS: []int64{3e6, 1e6, 2e6}, P50NS: hist.Value{NS: 2e6, OK: true}, MaxNS: 3e6}
	one := &result.ConnSetup{Method: result.ConnExchange, QPs: 1, SetupNS: []int64{3e6}, MaxNS: 3e6}
	var b strings.Builder
	rs := []result.Result{{Op: result.OpWrite, Mode: result.ModeBW, SizeBytes: 65536, Connection: c}, {Op: result.OpSend, Mode: result.ModeLat, SizeBytes: 2, Connection: one}, {Op: result.OpSend, Transport: result.TransportTCP}}
	c.Device, c.Address, one.Device = "rxe1", "192.0.2.1:4791", "rxe0"
	if err := WriteConnectionTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	out := unwrap(b.String())
	for _, want := range []string{connSetupNote, "setup_p50[msec]", "rdma_cm", "192.0.2.1:4791", "2.00", "3.00", "exchange", "n/a", "a setup p50 needs at least 2 QPs"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines != 5 { // note, head, 2 rows, n/a note
		t.Errorf("%d lines, want 5:\n%s", lines, out)
	}
	b.Reset()
	WriteConnectionTable(&b, []result.Result{{Op: result.OpSend}})
	if b.Len() != 0 {
		t.Errorf("no connections: wrote %q", b.String())
	}
}

func TestMRModeHeader(t *testing.T) {
	for _, tt := range []struct {
		results []result.Result
		want    string
	}{
		{nil, ""},
		{[]result.Result{{Transport: result.TransportTCP}}, ""},
		{[]result.Result{{MRMode: result.MRModePool}, {MRMode: result.MRModePool}}, "pool (registered once per test)"},
		{[]result.Result{{MRMode: result.MRModePerOp, HugePages: true}}, "per-op (the client registers each operation's local buffer around it; the server's stay pooled), huge pages"},
	} {
		if got := mrModeLine(tt.results); got != tt.want {
			t.Errorf("mrModeLine(%+v) = %q, want %q", tt.results, got, tt.want)
		}
	}
	var b strings.Builder
	if err := WriteBandwidthTable(&b, []result.Result{{Op: result.OpWrite, Mode: result.ModeBW, SizeBytes: 4096, MRMode: result.MRModePerOp}}, result.UnitMiB, Width); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(unwrap(b.String()), perOpBWNote) {
		t.Errorf("bandwidth table without the per-op note:\n%s", b.String())
	}
}

func TestInlineSummary(t *testing.T) {
	auto := "auto: rxe0 grants up to 512 B on RC QPs"
	tests := []struct {
		name    string
		results []result.Result
		want    string
		reasons int
	}{
		{"none", nil, "0[B]", 0},
		{"one size", []result.Result{{Op: "send", Mode: "lat", Inline: 236, InlineReason: auto}, {Op: "send", Mode: "lat", SizeBytes: 64, Inline: 236, InlineReason: auto}}, "236[B]", 1},
		{"per test", []result.Result{{Op: "send", Mode: "lat", Inline: 236, InlineReason: auto}, {Op: "write", Mode: "lat", Inline: 220, InlineReason: auto},
			{Op: "write", Mode: "bw", InlineReason: "auto: none in bandwidth tests"}}, "236[B] send lat, 220[B] write lat, 0[B] bw", 2},
		{"tcp ignored", []result.Result{{Op: "send", Mode: "lat", Transport: result.TransportTCP}}, "0[B]", 0},
	}
	for _, tc := range tests {
		got, reasons := inlineSummary(tc.results)
		if got != tc.want || len(reasons) != tc.reasons {
			t.Errorf("%s: %q %q, want %q and %d reasons", tc.name, got, reasons, tc.want, tc.reasons)
		}
	}
}

// TestVerifySRQHeader: the header sums up the --verify passes and says when
// a shared receive queue was used; neither line appears otherwise.
func TestVerifySRQHeader(t *testing.T) {
	if verifyLine([]result.Result{{}}) != "" || srqUsed([]result.Result{{}}) {
		t.Error("verify or SRQ line for results without them")
	}
	rs := []result.Result{{SRQ: true, Verify: &result.Verification{Messages: 64, Bytes: 128, CheckedBy: "server"}},
		{Verify: &result.Verification{Messages: 64, Bytes: 4096 * 64, CheckedBy: "client"}}}
	if got, want := verifyLine(rs), "--verify: 2 tests, 128 messages, 262272 bytes checked in a pass after each measured run (no figure includes it)"; got != want {
		t.Errorf("verifyLine = %q, want %q", got, want)
	}
	var b strings.Builder
	if err := WriteHeader(&b, &result.Document{Results: rs}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " Receive queue   : shared (--srq)") || !strings.Contains(b.String(), " Payload check   : --verify: 2 tests") {
		t.Errorf("header:\n%s", b.String())
	}
}
