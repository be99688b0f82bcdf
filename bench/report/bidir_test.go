package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// bidirResults are a bidirectional WRITE result (both sides' figures and
// their sums) and a one-way READ one, as the engine writes them.
func bidirResults() []result.Result {
	ok := func(ns float64) result.Nanos { return result.Nanos{NS: ns, OK: true} }
	cli := result.NewSideResult(65536, 40_000, 128, 1_000_000_000)
	srv := result.NewSideResult(65536, 38_000, 128, 990_000_000)
	return []result.Result{
		{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: cli.Ops + srv.Ops, Bandwidth: cli.Bandwidth.Plus(srv.Bandwidth),
			Latency: result.Latency{Count: 400, P50: ok(150_000), P99: ok(210_500.5)}, Bidirectional: true,
			Sides: &result.BidirSides{Client: cli, Server: srv},
			CPU:   &result.CPUUsage{ClientUSPerMsg: 12.5, ServerUSPerMsg: 12.25}, LinkUtilization: 0.25},
		{Op: "read", Mode: "bw", SizeBytes: 4096, Iterations: 1000, Bandwidth: result.NewBandwidth(4096, 1000, 10_000_000),
			Latency: result.Latency{Count: 1000, P50: ok(40_000), P99: ok(80_000)}},
	}
}

// TestReportBandwidthBidir: the sum row (op "write bidir") always; with
// sides, a client and a server row under it and a bytes column, each
// side's row adding up to the sum.
func TestReportBandwidthBidir(t *testing.T) {
	var b bytes.Buffer
	for _, sides := range []bool{false, true} {
		if sides {
			b.WriteString("with sides:\n")
		}
		if err := WriteBandwidthTableSides(&b, bidirResults(), result.UnitMiB, sides, Width); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, "bandwidth_bidir.golden", b.Bytes())
	without, with, _ := strings.Cut(b.String(), "with sides:\n")
	if strings.Contains(without, "  client") || strings.Contains(without, "bytes\n") || !strings.Contains(without, "write bidir") ||
		!strings.Contains(without, "sums of both sides' rates") {
		t.Errorf("table without sides:\n%s", without)
	}
	for _, want := range []string{"write bidir", "  client", "  server", "perftest --report-both",
		"4898.99", // 2500.00 + 2398.99: 40000 x 64 KiB over 1 s plus 38000 over 0.99 s
		"2500.00", // the client: 40000 x 64 KiB in 1 s
		"2621440000",
	} {
		if !strings.Contains(with, want) {
			t.Errorf("table with sides lacks %q:\n%s", want, with)
		}
	}
	// one-way tables are unchanged by the option
	var one, two bytes.Buffer
	WriteBandwidthTable(&one, bidirResults()[1:], result.UnitMiB, Width)
	WriteBandwidthTableSides(&two, bidirResults()[1:], result.UnitMiB, true, Width)
	if one.String() != two.String() {
		t.Errorf("sides changed a table without bidirectional results:\n%s\nvs\n%s", one.String(), two.String())
	}
}
