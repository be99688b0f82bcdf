package bench

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAMRModePoolVsPerOp: 4 KiB WRITE bandwidth from a pool and with
// per-operation registration, alternating three times. Both run; per-op
// must reach a lower message rate (compared as medians, so that one noisy
// run under emulation does not decide).
func TestRDMAMRModePoolVsPerOp(t *testing.T) {
	requireDevice(t)
	mpps := map[string][]float64{}
	for range 3 {
		for _, mode := range []string{result.MRModePool, result.MRModePerOp} {
			specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 3000, Warmup: -1, MRMode: mode}})
			doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
			if err != nil {
				t.Fatalf("--mr-mode %s: %v", mode, err)
			}
			r := checkDoc(t, doc, specs).Results[0]
			if r.MRMode != mode {
				t.Fatalf("result mr_mode %q, want %q", r.MRMode, mode)
			}
			mpps[mode] = append(mpps[mode], r.Bandwidth.Mpps)
		}
	}
	median := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	pool, perOp := median(mpps[result.MRModePool]), median(mpps[result.MRModePerOp])
	t.Logf("4 KiB WRITE bw: pool %.0f msgs/s %v, per-op %.0f msgs/s %v: per-op/pool = %.2f",
		pool*1e6, mpps[result.MRModePool], perOp*1e6, mpps[result.MRModePerOp], perOp/pool)
	if perOp >= pool {
		t.Fatalf("per-op registration (%.0f msgs/s) is not slower than the pool (%.0f msgs/s)", perOp*1e6, pool*1e6)
	}
}

// TestRDMAMRModePerOpOps: per-op latency for every op (SEND and WRITE with
// the server's reply, READ and atomics), bandwidth with chained posts on
// two QPs, UD SEND, and latency under pooled load. Each registers and
// deregisters per message, which TCG makes slow: 100 to 400 messages each
// (the checks are of what ran, not of rates).
func TestRDMAMRModePerOpOps(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite, result.OpRead, result.OpFetchAdd}, Modes: []string{result.ModeLat}, Sizes: []int{64}, Template: spec.Spec{Iters: 100, Warmup: -1, MRMode: result.MRModePerOp}})
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 400, Warmup: -1, TxDepth: 32, CQMod: 8, PostList: 4, QPs: 2, MRMode: result.MRModePerOp}})...)
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range checkDoc(t, doc, specs).Results {
		if r.MRMode != result.MRModePerOp || !strings.Contains(r.TimedInterval, "per-operation registration") {
			t.Errorf("%s %s: mr_mode %q, interval %q", r.Op, r.Mode, r.MRMode, r.TimedInterval)
		}
	}
	ud := plan(t, spec.Plan{Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{1024}, Template: spec.Spec{Iters: 100, Warmup: -1, QPType: result.QPTypeUD, MRMode: result.MRModePerOp}})
	if _, err := RunLoopback(context.Background(), runCfg(ud), testLog(t)); err != nil {
		t.Fatalf("UD per-op: %v", err)
	}
	load := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeLat}, Sizes: []int{2}, Template: spec.Spec{Iters: 100, Warmup: -1, MRMode: result.MRModePerOp, Load: &spec.Load{QPs: 2, Op: result.OpRead, Size: 65536, TxDepth: 16, CQMod: 1}}})
	doc, err = RunLoopback(context.Background(), runCfg(load), testLog(t))
	if err != nil {
		t.Fatalf("per-op under load: %v", err)
	}
	if r := doc.Results[0]; r.Load == nil || r.Load.Ops == 0 {
		t.Fatalf("load: %+v", r.Load)
	}
}

// TestRDMAMRModeODP: --mr-mode odp registers ODP pools where the device has
// ODP; on rxe (Linux 6.1) the test fails before any traffic with
// "ODP not supported by rxe0", an ErrNotSupported (exit 3).
func TestRDMAMRModeODP(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	caps, err := ctx.ODPCaps()
	if err != nil {
		t.Fatal(err)
	}
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeLat}, Sizes: []int{64}, Template: spec.Spec{Iters: 200, Warmup: -1, MRMode: result.MRModeODP}})
	cfg := runCfg(specs)
	cfg.Client.Device = ctx.Name()
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if caps.Supported && caps.RC&verbs.ODPWrite != 0 {
		if err != nil {
			t.Fatalf("%s has ODP, but: %v", ctx.Name(), err)
		}
		if r := doc.Results[0]; r.MRMode != result.MRModeODP {
			t.Fatalf("mr_mode %q", r.MRMode)
		}
		return
	}
	want := "ODP not supported by " + ctx.Name()
	if caps.Supported {
		want = "ODP RC WRITE not supported by " + ctx.Name()
	}
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, verbs.ErrNotSupported) {
		t.Fatalf("--mr-mode odp on %s: %v, want an ErrNotSupported with %q", ctx.Name(), err, want)
	}
	if doc == nil || len(doc.Results) != 0 {
		t.Fatalf("results after the ODP refusal: %+v", doc)
	}
}

// TestRDMAMRModeHugePages: --hugepages fails clearly where no huge pages are
// reserved (the guest reserves none) and runs where some are.
func TestRDMAMRModeHugePages(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 500, Warmup: -1, HugePages: true}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if endpoint.ReadMeminfo().HugePagesTotal > 0 {
		if err != nil {
			t.Fatalf("with huge pages reserved: %v", err)
		}
		if r := doc.Results[0]; !r.HugePages {
			t.Fatal("result without hugepages")
		}
		return
	}
	if !errors.Is(err, endpoint.ErrNoHugePages) || !strings.Contains(err.Error(), "sysctl vm.nr_hugepages=N") {
		t.Fatalf("--hugepages without huge pages: %v", err)
	}
}
