package verbs_test

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAEngineAddrStep checks address stepping on a real device from the
// memory it touched: n fetch-and-adds stepped by 64 bytes over a 4 KiB cycle
// leave n/64 in each of the 64 remote counters (unstepped: n in the first,
// 0 in the others), and stepped 64-byte WRITEs leave each remote slot with
// the matching source slot's bytes. After the run, PostOne posts at the
// areas' starts again (the verify pass relies on that).
func TestRDMAEngineAddrStep(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const area, cycle, step, n = 4096, 4096, 64, 64 * 20
	for _, tt := range []struct {
		name    string
		op      verbs.Opcode
		size    int
		stepped bool
	}{
		{"fetch_add stepped", verbs.OpFetchAdd, 8, true},
		{"fetch_add unstepped", verbs.OpFetchAdd, 8, false},
		{"write stepped", verbs.OpWrite, 64, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * area,
				Access: verbs.AccessRemoteWrite | verbs.AccessRemoteAtomic, Depth: 32})
			src, dst := a.Buf.Bytes(), b.Buf.Bytes()
			for i := range src[:area] {
				src[i] = byte(i/step + 1) // slot j holds j+1
			}
			clear(dst)
			cfg := verbs.EngineConfig{QP: a.QP, MR: a.MR, Op: tt.op, Size: tt.size, RecvOffset: area,
				RemoteAddr: b.MR.Addr() + area, RKey: b.MR.RKey(), TxDepth: 16, CQMod: 4, RxDepth: 1,
				Timeout: 5 * time.Second, Samples: n}
			if tt.stepped {
				cfg.AddrStep, cfg.AddrCycle = step, cycle
			}
			e := streamN(t, cfg, n)
			target := dst[area : 2*area]
			for j := 0; j < cycle/step; j++ {
				slot := target[j*step : (j+1)*step]
				var want, got string
				switch {
				case tt.op == verbs.OpFetchAdd:
					c := uint64(0)
					if tt.stepped {
						c = n / (cycle / step)
					} else if j == 0 {
						c = n
					}
					want, got = fmt.Sprint(c), fmt.Sprint(binary.LittleEndian.Uint64(slot))
				default:
					want, got = fmt.Sprint(j+1), fmt.Sprint(slot[0])
					for _, c := range slot {
						if c != slot[0] {
							got = fmt.Sprintf("mixed %v", slot)
						}
					}
				}
				if got != want {
					t.Fatalf("remote slot %d (offset %d): %s, want %s", j, j*step, got, want)
				}
			}
			if tt.op != verbs.OpFetchAdd {
				return
			}
			before := binary.LittleEndian.Uint64(target)
			if err := e.PostOne(); err != nil {
				t.Fatal(err)
			}
			if got := binary.LittleEndian.Uint64(target); got != before+1 {
				t.Fatalf("PostOne after the run: first counter %d, want %d (the areas' start)", got, before+1)
			}
		})
	}
}

// streamN creates an engine of cfg and streams n operations on it (its
// bandwidth loop, batch after batch); the engine closes when the test ends.
func streamN(t *testing.T, cfg verbs.EngineConfig, n uint64) *verbs.Engine {
	t.Helper()
	e, err := verbs.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.SetTarget(n)
	for e.Completed() < n {
		e.ResetSamples()
		if _, err := e.BWClient(verbs.Now() + int64(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestRDMAEngineAddrStepRefused: a cycle that does not fit the areas, or
// a step below the message, is refused before any work.
func TestRDMAEngineAddrStepRefused(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 8192, Access: verbs.AccessRemoteWrite, Depth: 8})
	for _, tt := range []struct{ size, step, cycle int }{
		{64, 32, 4096},   // step below the message
		{64, 64, 8192},   // cycle past the receive offset
		{64, 8192, 4096}, // step past the cycle
	} {
		cfg := verbs.EngineConfig{QP: a.QP, MR: a.MR, Op: verbs.OpWrite, Size: tt.size, RecvOffset: 4096,
			RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), TxDepth: 8, CQMod: 1, RxDepth: 1, Samples: 16,
			AddrStep: tt.step, AddrCycle: tt.cycle}
		if e, err := verbs.NewEngine(cfg); err == nil {
			e.Close()
			t.Errorf("step %d cycle %d size %d: accepted", tt.step, tt.cycle, tt.size)
		}
	}
}

// TestRDMAEngineRecvStep: with RecvStep the receives step over the
// receive area's cycle as perftest's do: receive k's wr_id is the area's
// start plus (k mod slots) × step, and stepped 64-byte SENDs from source
// slot j land in receive slot j.
func TestRDMAEngineRecvStep(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const area, cycle, step, slots = 4096, 2048, 64, 2048 / 64
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * area, Depth: slots})
	src, dst := a.Buf.Bytes(), b.Buf.Bytes()
	for i := range src[:area] {
		src[i] = byte(i/step + 1) // slot j holds j+1
	}
	clear(dst)
	base := verbs.EngineConfig{Op: verbs.OpSend, Size: step, RecvOffset: area, TxDepth: 8, CQMod: 1, RxDepth: slots,
		Timeout: 5 * time.Second, Samples: slots, AddrStep: step, AddrCycle: cycle}
	scfg, rcfg := base, base
	scfg.QP, scfg.MR = a.QP, a.MR
	rcfg.QP, rcfg.MR, rcfg.RecvStep = b.QP, b.MR, step
	send, err := verbs.NewEngine(scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer send.Close()
	recv, err := verbs.NewEngine(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	if err := recv.PostRecvs(slots); err != nil {
		t.Fatal(err)
	}
	if recv.RecvSpan() != cycle {
		t.Fatalf("RecvSpan %d, want the cycle %d", recv.RecvSpan(), cycle)
	}
	send.SetTarget(slots)
	for send.Completed() < slots {
		send.ResetSamples()
		if _, err := send.BWClient(verbs.Now() + int64(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	for k := range slots {
		addr, n, err := recv.RecvOne()
		if err != nil {
			t.Fatal(err)
		}
		if want := recv.RecvArea() + uint64(k*step); addr != want || n != step {
			t.Fatalf("receive %d at 0x%x (%d bytes), want 0x%x (%d bytes): receives do not step", k, addr, n, want, step)
		}
	}
	for j := range slots {
		slot := dst[area+j*step : area+(j+1)*step]
		for _, c := range slot {
			if c != byte(j+1) {
				t.Fatalf("receive slot %d holds %v, want %d: the SEND from source slot %d", j, slot, j+1, j)
			}
		}
	}
	// a receive step below the message is refused before any work
	bad := rcfg
	bad.RecvStep = step / 2
	if e, err := verbs.NewEngine(bad); err == nil {
		e.Close()
		t.Fatal("a receive step below the message was accepted")
	}
}
