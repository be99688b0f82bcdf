package mr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestMRSizes(t *testing.T) {
	sizes, err := spec.ParseSizes("4K-1G")
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 19 || sizes[0] != 4<<10 || sizes[18] != 1<<30 {
		t.Fatalf("4K-1G = %v, want 19 powers of two from 4K to 1G", sizes)
	}
	var cfg Config
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sizes) != 5 || cfg.Sizes[4] != 256<<20 || cfg.Iters != DefaultIters || cfg.OpSize != 4096 || cfg.OpIters != DefaultOpIters {
		t.Fatalf("defaults: %+v", cfg)
	}
	for _, bad := range []Config{{Iters: -1}, {OpIters: 2e7}, {OpSize: 2 << 30}, {Sizes: []int{0}}} {
		if err := bad.defaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestMRSkipReason(t *testing.T) {
	m := endpoint.Meminfo{MemAvailable: 1 << 30, HugePagesTotal: 4, HugePagesFree: 3, HugePageSize: 2 << 20}
	memlock := &verbs.MemlockError{Current: 8 << 20, Needed: 16 << 20}
	for _, tt := range []struct {
		name    string
		size    int
		maxMR   uint64
		memlock error
		huge    bool
		want    []string // substrings; none: not skipped
	}{
		{"fits", 512 << 20, 0, nil, false, nil},
		{"memory", 1 << 30, 0, nil, false, []string{"1G skipped", "MemAvailable is 1024 MiB", "128 MiB to spare"}},
		{"memlock", 16 << 20, 0, memlock, false, []string{"16M skipped", "RLIMIT_MEMLOCK is 8388608 bytes"}},
		{"max_mr_size", 16 << 20, 8 << 20, nil, false, []string{"16M skipped", "max_mr_size of 8388608 bytes"}},
		{"huge fits", 6 << 20, 0, nil, true, nil},
		{"huge pages", 16 << 20, 0, nil, true, []string{"16M skipped", "needs 8 huge pages of 2 MiB, 3 free"}},
		{"huge ignores MemAvailable", 4 << 10, 0, nil, true, nil},
	} {
		got := mrSkipReason(tt.size, tt.maxMR, tt.memlock, m, tt.huge)
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%s: skipped: %s", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
	}
}

// mrFixture is a document as Run returns it, with made-up figures.
func mrFixture() *Document {
	reg := newRegResult(4096, []uint64{30000, 31000, 32000, 29000, 30500, 29500}, []uint64{8000, 9000, 8500, 9500, 8700, 9100})
	big := newRegResult(256<<20, []uint64{4000000, 5000000, 4100000, 3900000, 4200000, 3800000}, []uint64{700000, 800000, 750000, 720000, 780000, 760000})
	ops := &Ops{Op: result.OpWrite, SizeBytes: 4096, Iterations: 200, Warmup: 10,
		Pooled: OpResult{Mode: "pooled", TimedInterval: timedPooled, Latency: result.Latency{Count: 200, P50: result.Nanos{NS: 65000, OK: true}, P99: result.Nanos{NS: 90000, OK: true}},
			DurationNS: 14e6, OpsPerSec: 14285.7, Bandwidth: result.NewBandwidth(4096, 200, 14e6)},
		PerOp: OpResult{Mode: "per-op", TimedInterval: timedPerOp, Latency: result.Latency{Count: 200, P50: result.Nanos{NS: 120000, OK: true}, P99: result.Nanos{NS: 150000, OK: true}},
			DurationNS: 25e6, OpsPerSec: 8000, Bandwidth: result.NewBandwidth(4096, 200, 25e6)},
		Ratio: 14285.7 / 8000}
	return &Document{
		Document: result.Document{SchemaVersion: result.SchemaVersion, Tool: "rdmabench", Role: "mr", Results: []result.Result{},
			Env: result.Env{Device: "rxe0", Port: 1, LinkLayer: "Ethernet", ActiveMTU: 4096, QPType: "RC", ClockSource: "CLOCK_MONOTONIC_RAW"}},
		MR: Report{Access: "LOCAL_WRITE", Iterations: 1000, TimePerSizeNS: 10e9, Registration: []RegResult{reg, big},
			Skipped: []SkippedSize{{1 << 30, "1G skipped: needs 1024 MiB of memory plus 128 MiB to spare, MemAvailable is 900 MiB"}},
			Ops:     ops},
	}
}

func TestMRRegResult(t *testing.T) {
	r := newRegResult(4096, []uint64{1000, 2000, 3000, 1500, 2500, 2200}, []uint64{500, 500, 500, 500, 500, 500})
	if r.Iterations != 6 || !r.Reg.P50.OK || r.Reg.Max != 3000 || r.Dereg.Min != 500 {
		t.Fatalf("result %+v", r)
	}
	if want := 4096 / r.Reg.P50.NS; r.RegGBPerSec != want {
		t.Fatalf("rate %v GB/s, want size / p50 = %v", r.RegGBPerSec, want)
	}
	if five := newRegResult(4096, []uint64{1000, 1, 2, 3, 4}, []uint64{500, 1, 2, 3, 4}); five.Reg.P50.OK || five.RegGBPerSec != 0 {
		t.Fatalf("five samples: p50 %v, rate %v; want n/a and 0 (p50 needs 6)", five.Reg.P50, five.RegGBPerSec)
	}
}

func TestMRReport(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReport(&b, mrFixture()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	find := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return l
			}
		}
		t.Fatalf("no line starting with %q in:\n%s", prefix, out)
		return ""
	}
	head := find("size")
	row := find("4K")
	if len(head) != len(row) {
		t.Errorf("registration table not aligned:\n%s\n%s", head, row)
	}
	for _, f := range []string{"size", "#iters", "reg_p50[usec]", "reg_p99[usec]", "reg_max[usec]", "dereg_p50[usec]",
		"dereg_p99[usec]", "dereg_max[usec]", "reg_rate[GB/s]"} {
		if !strings.Contains(head, f) {
			t.Errorf("header lacks %s: %s", f, head)
		}
	}
	// 6 samples: p50 backed (30 us at the histogram's resolution), p99 n/a;
	// 4096 B / 30 us = 0.14 GB/s.
	if f := strings.Fields(row); len(f) != 9 || f[1] != "6" || f[2] != "30.02" || f[3] != "n/a" || f[4] != "32.00" || f[8] != "0.14" {
		t.Errorf("4K row: %q", f)
	}
	if f := strings.Fields(find("256M")); f[8] != "67.08" { // 268435456 B / 4 ms (the p50 of 6)
		t.Errorf("256M row: %q", f)
	}
	for _, want := range []string{
		"access LOCAL_WRITE, 1000 iterations per size (at most 10s per size)",
		"note: 1G skipped: needs 1024 MiB",
		"RDMA WRITE of 4K to a passive QP on the same device, one at a time: 200 per mode after 10 warm-up",
		"pooled/per-op throughput ratio: 1.79x",
		"per-op: lat_* time from before ibv_reg_mr to after ibv_dereg_mr",
		"n/a: too few samples for the percentile's 95 % confidence interval",
		"Device          : rxe0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if f := strings.Fields(find("per-op")); len(f) != 6 || f[2] != "120.00" || f[4] != "8000" || f[5] != "32.77" {
		t.Errorf("per-op row: %q", f)
	}
}

func TestMRJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mr.json")
	if err := WriteJSONFile(path, mrFixture()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		SchemaVersion int             `json:"schema_version"`
		Tool          string          `json:"tool"`
		Results       []any           `json:"results"`
		Env           map[string]any  `json:"environment"`
		MR            json.RawMessage `json:"mr"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != result.SchemaVersion || m.Tool != "rdmabench" || m.Results == nil || m.Env["device"] != "rxe0" {
		t.Fatalf("document fields: %+v", m)
	}
	var mr Report
	if err := json.Unmarshal(m.MR, &mr); err != nil {
		t.Fatal(err)
	}
	if len(mr.Registration) != 2 || !mr.Registration[0].Reg.P50.OK || mr.Registration[0].Reg.P99.OK ||
		mr.Ops == nil || mr.Ops.PerOp.Mode != "per-op" || mr.Ops.Ratio < 1.78 || len(mr.Skipped) != 1 {
		t.Fatalf("mr section: %s", m.MR)
	}
	for _, key := range []string{`"reg_ns"`, `"dereg_ns"`, `"reg_gb_per_s"`, `"pooled_over_per_op"`, `"ops_per_s"`, `"odp_caps"`, `"p99": null`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestRDMAMRRun(t *testing.T) {
	testutil.RequireRDMA(t)
	var progress bytes.Buffer
	doc, err := Run(context.Background(), Config{GIDIndex: -1, Sizes: []int{4 << 10, 1 << 20}, Iters: 50, OpIters: 200,
		Progress: &progress, CommandLine: []string{"bench.test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(progress.String())
	var out bytes.Buffer
	if err := WriteReport(&out, doc); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	m := doc.MR
	if len(m.Registration) != 2 || len(m.Skipped) != 0 {
		t.Fatalf("%d sizes measured, %d skipped: %+v", len(m.Registration), len(m.Skipped), m.Skipped)
	}
	for _, r := range m.Registration {
		if r.Iterations != 50 || r.Reg.Count != 50 || !r.Reg.P50.OK || r.Reg.Min <= 0 || r.Dereg.Min <= 0 || r.RegGBPerSec <= 0 {
			t.Errorf("%d bytes: %+v", r.SizeBytes, r)
		}
	}
	o := m.Ops
	if o == nil || o.Pooled.Latency.Count != 200 || o.PerOp.Latency.Count != 200 || o.Pooled.OpsPerSec <= 0 {
		t.Fatalf("ops: %+v", o)
	}
	if o.PerOp.Latency.P50.NS <= o.Pooled.Latency.P50.NS || o.Ratio <= 1 {
		t.Errorf("per-op p50 %v, pooled p50 %v, ratio %.2f: registration per operation should cost something",
			o.PerOp.Latency.P50, o.Pooled.Latency.P50, o.Ratio)
	}
	if doc.Env.Device == "" || doc.End.Before(doc.Start) || doc.Role != "mr" {
		t.Errorf("document header: device %q, start %v, end %v, role %q", doc.Env.Device, doc.Start, doc.End, doc.Role)
	}
}

func TestRDMAMRODP(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	caps, err := ctx.ODPCaps()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Run(context.Background(), Config{Device: ctx.Name(), GIDIndex: -1, Sizes: []int{4 << 10}, Iters: 20, OpIters: 50, ODP: true})
	if caps.Supported && caps.RC&verbs.ODPWrite != 0 {
		if err != nil || doc.MR.Access != "LOCAL_WRITE|ON_DEMAND" {
			t.Fatalf("%s has ODP, but: %v", ctx.Name(), err)
		}
		return
	}
	if want := "ODP not supported by " + ctx.Name(); caps.Supported {
		want = "ODP RC WRITE not supported by " + ctx.Name()
		if err == nil || err.Error() != want {
			t.Fatalf("Run --odp: %v, want %q", err, want)
		}
	} else if err == nil || err.Error() != want || !errors.Is(err, verbs.ErrNotSupported) {
		t.Fatalf("Run --odp: %v, want exactly %q", err, want)
	}
}
