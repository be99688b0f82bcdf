package bench

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
)

// TestRDMABudgetNeedMatchesMemory: NeedOf, which the budget checks
// before anything exists, is what endpoint.NewTest really maps, registers
// and opens, on both sides, for pools, load QPs, per-op buffers, UD and
// the workload knobs (a region, per-MR buffers, idle QPs).
func TestRDMABudgetNeedMatchesMemory(t *testing.T) {
	requireDevice(t)
	dev, err := device.Open("", 1, -1, netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var specs []spec.Spec
	for _, p := range []spec.Plan{
		{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{65536, 3000}, Template: spec.Spec{QPs: 4, Iters: 100, Warmup: -1}},
		{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Sizes: []int{2}, Template: spec.Spec{Iters: 100, Warmup: -1,
			Load: &spec.Load{QPs: 3, Op: result.OpWrite, Size: 100 << 10}}},
		{Ops: []string{result.OpRead}, Modes: []string{result.ModeBW}, Sizes: []int{5000}, Template: spec.Spec{Iters: 100, Warmup: -1, MRMode: result.MRModePerOp}},
		{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Sizes: []int{1024}, Template: spec.Spec{Iters: 100, Warmup: -1, QPType: result.QPTypeUD}},
		{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{8 << 20}, Template: spec.Spec{QPs: 6, Iters: 100, Warmup: -1}}, // two slabs (rxe: max_msg_sz 8 MiB)
		// address stepping over a 64 KiB cycle: the areas grow to hold it
		{Ops: []string{result.OpFetchAdd}, Modes: []string{result.ModeBW}, Template: spec.Spec{QPs: 2, Iters: 100, Warmup: -1, AddrCycle: 64 << 10}},
		// the workload knobs: a region in 4 MRs (per-MR buffers on the client), idle QPs
		{Ops: []string{result.OpRead}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 100, Warmup: -1, Region: 1 << 20, MRs: 4, IdleQPs: 3}},
	} {
		specs = append(specs, plan(t, p)...)
	}
	for _, s := range specs {
		for _, client := range []bool{true, false} {
			eps, err := endpoint.NewTest(dev, s, client)
			if err != nil {
				t.Fatalf("%s client=%v: %v", s.Name(), client, err)
			}
			var got endpoint.Need
			got.Registered = eps.Mem.Measured.MappedBytes()
			if eps.Mem.Load != nil {
				got.Registered += eps.Mem.Load.MappedBytes()
			}
			if eps.Mem.Idle != nil {
				got.Registered += eps.Mem.Idle.MappedBytes()
			}
			got.Registered += eps.Spread.MappedBytes()
			for _, ep := range eps.All() {
				if ep.OpBuf != nil {
					got.Unregister += int64(ep.OpBuf.Len())
				}
			}
			got.QPs = len(eps.All()) + len(eps.Idle)
			want := endpoint.NeedOf(s, client)
			if got.Registered != want.Registered || got.Unregister != want.Unregister || got.QPs != want.QPs {
				t.Errorf("%s client=%v: mapped %d registered + %d other, %d QPs; Need says %d + %d, %d QPs",
					endpoint.Describe(s), client, got.Registered, got.Unregister, got.QPs, want.Registered, want.Unregister, want.QPs)
			}
			t.Logf("%s client=%v: %s registered, %d QPs", endpoint.Describe(s), client, endpoint.FormatBytes(got.Registered), got.QPs)
			if err := eps.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// startBudgetServer serves on 127.0.0.1 with budget b until the test ends.
func startBudgetServer(t *testing.T, b endpoint.Budget) string {
	t.Helper()
	srv, err := server.New(server.Config{GIDIndex: -1, Port: 1, Log: testLog(t), Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	return ln.Addr().String()
}

// TestRDMABudgetServerRefuses: tests over the server's --max-memory or
// --max-qps (RDMA and TCP) are refused with the figures, the session
// stays in step, and a test within the budget then runs.
func TestRDMABudgetServerRefuses(t *testing.T) {
	requireDevice(t)
	addr := startBudgetServer(t, endpoint.Budget{MaxMemory: 4 << 20, MaxQPs: 2})
	cl, err := Dial(context.Background(), addr, ClientConfig{Port: 1, GIDIndex: -1}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	small := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200, Warmup: -1}})[0]
	for _, c := range []struct {
		spec spec.Spec
		want string
	}{
		{plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{1 << 20}, Template: spec.Spec{QPs: 2, Iters: 100, Warmup: -1}})[0],
			"write bw 2 QPs x 1 MiB needs 5.0 MiB of memory (4 MiB registered, 1.0 MiB other buffers) on the server; its --max-memory is 4 MiB"},
		{plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Template: spec.Spec{QPs: 3, Iters: 100, Warmup: -1}})[0],
			"needs 3 QPs on the server; its --max-qps is 2"},
		{plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}, Sizes: []int{8 << 20}, Template: spec.Spec{Transport: result.TransportTCP, Iters: 10, Warmup: -1}})[0],
			"tcp send bw 1 connection x 8 MiB needs"},
	} {
		_, err := cl.Run(context.Background(), c.spec, measure.Options{CPU: -1})
		if !endpoint.IsOverBudget(err) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "its --max-") {
			t.Errorf("%s: %v, want a budget refusal with %q", c.spec.Name(), err, c.want)
		}
		t.Logf("%s: %v", c.spec.Name(), err)
		if _, err := cl.Run(context.Background(), small, measure.Options{CPU: -1}); err != nil {
			t.Fatalf("test within the budget after a refusal: %v", err)
		}
	}
	cl.Close()
	// rdma_cm: refused before the server binds a listener, and in step too
	testutil.CMAddress(t)
	cm, err := Dial(context.Background(), addr, ClientConfig{Port: 1, GIDIndex: -1, RDMACM: true}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	bomb := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{1 << 20}, Template: spec.Spec{QPs: 2, Iters: 100, Warmup: -1, RDMACM: true}})[0]
	if _, err := cm.Run(context.Background(), bomb, measure.Options{CPU: -1}); !endpoint.IsOverBudget(err) {
		t.Errorf("rdma_cm %s: %v, want a budget refusal", bomb.Name(), err)
	}
	small.RDMACM = true
	if _, err := cm.Run(context.Background(), small, measure.Options{CPU: -1}); err != nil {
		t.Fatalf("rdma_cm test within the budget after a refusal: %v", err)
	}
}
