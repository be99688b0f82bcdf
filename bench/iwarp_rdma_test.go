package bench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAiWARP runs every RC op and mode on the iWARP device (siw in the
// guest) through rdma_cm, as TestRDMACMLoopback does on RoCE, and checks
// that what iWARP lacks fails before any traffic with ErrNotSupported.
func TestRDMAiWARP(t *testing.T) {
	dev := testutil.RequireIWARP(t)
	ctx, err := verbs.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	attr, err := ctx.QueryDevice()
	ctx.Close()
	if err != nil {
		t.Fatal(err)
	}
	ops := []string{result.OpSend, result.OpWrite, result.OpRead}
	if attr.AtomicCap != 0 {
		ops = append(ops, result.OpFetchAdd, result.OpCmpSwap)
	}
	specs := plan(t, spec.Plan{Ops: ops, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{2, 65536},
		Template: spec.Spec{Iters: 100, Warmup: 10, RDMACM: true}})
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 400, QPs: 4, Threads: 2, RDMACM: true}})...)
	cfg := runCfg(specs)
	cfg.Client.Device, cfg.Client.RDMACM = dev, true
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	if back.Env.Device != dev || back.Env.Transport != "iWARP" {
		t.Errorf("environment: device %s transport %q, want %s iWARP", back.Env.Device, back.Env.Transport, dev)
	}
	for _, r := range back.Results {
		if r.Connection == nil || r.Connection.Method != result.ConnRDMACM || r.Connection.Device != dev {
			t.Errorf("%s %s: connection %+v, want rdma_cm on %s", r.Op, r.Mode, r.Connection, dev)
		}
	}

	refused := []struct {
		name string
		p    spec.Plan
		rdma bool
	}{
		{"UD", spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 10, QPType: result.QPTypeUD}}, false},
		{"without rdma_cm", spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 10}}, false},
	}
	if attr.AtomicCap == 0 {
		refused = append(refused, struct {
			name string
			p    spec.Plan
			rdma bool
		}{"atomics", spec.Plan{Ops: []string{result.OpFetchAdd}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 10, RDMACM: true}}, true})
	}
	for _, tc := range refused {
		cfg := runCfg(plan(t, tc.p))
		cfg.Client.Device, cfg.Client.RDMACM = dev, tc.rdma
		_, err := RunLoopback(context.Background(), cfg, testLog(t))
		if !errors.Is(err, verbs.ErrNotSupported) || !strings.Contains(err.Error(), dev) {
			t.Errorf("%s on %s: %v, want ErrNotSupported naming the device", tc.name, dev, err)
		}
	}
}
