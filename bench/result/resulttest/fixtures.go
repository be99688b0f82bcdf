// Package resulttest holds result fixtures for the tests of the packages
// that read or print results (report, compare, plot). Pure Go.
package resulttest

import (
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// Hist returns a histogram holding vals (ns).
func Hist(t testing.TB, vals ...int64) *hist.Histogram {
	t.Helper()
	h := hist.New()
	for _, v := range vals {
		h.Record(v)
	}
	return h
}

// Document returns a document with one SEND latency result (RTT/2, from
// 4001 round trips: p99.9 backed, p99.99 not) and one bandwidth result.
func Document(t testing.TB) *result.Document {
	t.Helper()
	h := hist.New()
	for i := int64(1); i <= 4000; i++ {
		h.Record(9000 + i/4)
	}
	h.Record(177001) // the true max, odd so RTT/2 is fractional
	lat := result.Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: 4001, Warmup: 100, DurationNS: 10_500_000,
		TimedInterval: "half of a SEND/RECV ping-pong round trip (RTT/2)", TxDepth: 1, CQMod: 1, RxDepth: 1,
		Bandwidth: result.NewBandwidth(2, 4001, 10_500_000)}
	if err := lat.SetLatency(h, 2); err != nil {
		t.Fatal(err)
	}
	bw := result.Result{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: 5000, DurationNS: 1e9,
		TimedInterval: "post to completion of a signaled work request", TxDepth: 128, CQMod: 100, RxDepth: 512,
		Bandwidth: result.NewBandwidth(65536, 5000, 1e9),
		Intervals: []result.Interval{{StartNS: 0, EndNS: 5e8, Ops: 2500, Bandwidth: result.NewBandwidth(65536, 2500, 5e8),
			P50: result.Nanos{NS: 4100, OK: true}}}}
	if err := bw.SetLatency(Hist(t, 4000, 4100, 4200, 4150, 4050, 4120, 90000), 1); err != nil {
		t.Fatal(err)
	}
	return &result.Document{
		SchemaVersion: result.SchemaVersion, Tool: "rdmabench", ToolVersion: "v0.1.0",
		CommandLine: []string{"rdmabench", "run", "--ops", "send,write"},
		Start:       time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC),
		End:         time.Date(2026, 3, 4, 5, 6, 9, 0, time.UTC),
		Role:        "loopback",
		Env:         Env(),
		Results:     []result.Result{lat, bw},
		Warnings:    []string{result.SoftwareRDMANote("rxe0", "rdma_rxe", "lo", true)},
	}
}

func Env() result.Env {
	return result.Env{Host: "vm", Kernel: "6.8.0 #1 SMP", RDMACoreVersion: "44.0", Device: "rxe0", Driver: "rdma_rxe",
		Firmware: "0.0.0", VendorID: 0xffffff, SoftwareRDMA: true, SoftwareRDMANote: result.SoftwareRDMANote("rxe0", "rdma_rxe", "lo", true),
		Port: 1, LinkLayer: "Ethernet", ActiveMTU: 4096, PathMTU: 4096, LinkSpeed: "2.5 Gbps", LinkGbps: 2.5,
		GIDIndex: 1, GIDType: "RoCE v2", GID: "::ffff:127.0.0.1", GIDReason: "RoCE v2 GID matching the local address 127.0.0.1",
		InlineSizeGranted: 0, QPType: "RC", ClockSource: "CLOCK_MONOTONIC_RAW", ClockRateHz: 1e9, ClockResolutionNS: 1,
		CPUModel: "AMD EPYC", NumCPU: 4, GoVersion: "go1.26.8", EnginePinnedCPU: -1,
		Checks: result.EnvChecks{Governors: []string{"performance"}, DeviceNUMANode: -1, CPUNUMANode: -1, MemlockSoftBytes: -1, MemlockHardBytes: -1}}
}
