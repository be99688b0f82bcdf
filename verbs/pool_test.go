package verbs_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// newPool creates a pool on a fresh PD; the test fails if closing either
// fails at the end.
func newPool(t testing.TB, pd *verbs.PD, cfg verbs.PoolConfig) *verbs.Pool {
	t.Helper()
	p, err := pd.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "pool", p)
	return p
}

// TestRDMAPool gets every buffer of pools of several shapes and checks
// addresses, lengths, keys, slabs, exhaustion and Put.
func TestRDMAPool(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	for _, tt := range []struct {
		name      string
		cfg       verbs.PoolConfig
		slabs     int
		stride    uint64
		remoteKey bool
	}{
		{"one slab", verbs.PoolConfig{BufSize: 8192, Count: 4, Access: verbs.AccessLocalWrite}, 1, 8192, false},
		{"odd size, aligned", verbs.PoolConfig{BufSize: 100, Count: 10, Access: verbs.AccessLocalWrite}, 1, 128, false},
		{"several slabs", verbs.PoolConfig{BufSize: 4096, Count: 7, SlabSize: 3 * 4096, Access: verbs.AccessLocalWrite | verbs.AccessRemoteWrite}, 3, 4096, true},
		{"buffer above slab size", verbs.PoolConfig{BufSize: 64 << 10, Count: 2, SlabSize: 4096, Access: verbs.AccessRemoteRead}, 2, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pd := newPD(t, ctx)
			p := newPool(t, pd, tt.cfg)
			if p.Slabs() != tt.slabs || p.PD() != pd {
				t.Fatalf("%d slabs, want %d", p.Slabs(), tt.slabs)
			}
			var bufs []*verbs.PoolBuf
			for i := range tt.cfg.Count {
				b, err := p.Get()
				if err != nil {
					t.Fatalf("Get %d: %v", i, err)
				}
				mr := b.MR()
				if b.Len() != uint64(tt.cfg.BufSize) || len(b.Bytes()) != tt.cfg.BufSize || b.Addr()%verbs.PoolAlign != 0 ||
					b.Addr() < mr.Addr() || b.Addr()+b.Len() > mr.Addr()+mr.Len() || b.LKey() != mr.LKey() || b.RKey() != mr.RKey() ||
					mr.Access() != tt.cfg.Access || b.Pool() != p {
					t.Fatalf("buffer %d: addr 0x%x len %d lkey %#x outside its MR 0x%x+%d (lkey %#x, access %s)",
						i, b.Addr(), b.Len(), b.LKey(), mr.Addr(), mr.Len(), mr.LKey(), mr.Access())
				}
				if i > 0 && tt.stride > 0 && b.MR() == bufs[i-1].MR() && b.Addr()-bufs[i-1].Addr() != tt.stride {
					t.Fatalf("buffer %d at 0x%x, previous at 0x%x: want a stride of %d", i, b.Addr(), bufs[i-1].Addr(), tt.stride)
				}
				b.Bytes()[0], b.Bytes()[len(b.Bytes())-1] = byte(i), byte(i) // the memory is usable
				bufs = append(bufs, b)
			}
			for i, b := range bufs {
				if b.Bytes()[0] != byte(i) || b.Bytes()[len(b.Bytes())-1] != byte(i) {
					t.Fatalf("buffer %d overlaps another", i)
				}
			}
			if p.Out() != tt.cfg.Count {
				t.Fatalf("Out() = %d, want %d", p.Out(), tt.cfg.Count)
			}
			_, err := p.Get()
			want := "all " + strconv.Itoa(tt.cfg.Count) + " buffers of " + strconv.Itoa(tt.cfg.BufSize) + " bytes are out"
			if !errors.Is(err, verbs.ErrPoolExhausted) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Get on an empty pool: %v, want ErrPoolExhausted with %q", err, want)
			}
			if err := p.Close(); err == nil || !strings.Contains(err.Error(), strconv.Itoa(tt.cfg.Count)+" buffers still out") {
				t.Fatalf("Close with buffers out: %v", err)
			}
			for _, b := range bufs {
				if err := b.Put(); err != nil {
					t.Fatal(err)
				}
			}
			if err := bufs[0].Put(); err == nil || !strings.Contains(err.Error(), "not out") {
				t.Fatalf("second Put: %v", err)
			}
			if b, err := p.Get(); err != nil || b != bufs[len(bufs)-1] {
				t.Fatalf("Get after Put: %v", err) // the last one put back comes first
			} else if err := p.Put(b); err != nil {
				t.Fatal(err)
			}
			if err := pd.Close(); err == nil {
				t.Fatal("PD closed under a pool's MRs")
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Get(); !errors.Is(err, verbs.ErrClosed) {
				t.Fatalf("Get after Close: %v", err)
			}
			if err := p.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// TestRDMAPoolErrors: bad configurations name the value and the limit;
// another pool's buffer is refused.
func TestRDMAPoolErrors(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	pd := newPD(t, ctx)
	for _, tt := range []struct {
		name string
		cfg  verbs.PoolConfig
		want string
	}{
		{"zero size", verbs.PoolConfig{BufSize: 0, Count: 1}, "pool buffer size 0 bytes out of range 1.."},
		{"zero count", verbs.PoolConfig{BufSize: 64, Count: 0}, "pool of 0 buffers out of range 1..1048576"},
		{"too many", verbs.PoolConfig{BufSize: 64, Count: verbs.MaxPoolBuffers + 1}, "pool of 1048577 buffers out of range"},
		{"negative slab", verbs.PoolConfig{BufSize: 64, Count: 1, SlabSize: -1}, "slab size -1 bytes must not be negative"},
		{"remote write alone", verbs.PoolConfig{BufSize: 64, Count: 1, Access: verbs.AccessRemoteWrite}, "needs LOCAL_WRITE"},
		{"ODP ops without ODP", verbs.PoolConfig{BufSize: 64, Count: 1, ODPOps: verbs.ODPWrite}, "ODP operations WRITE need AccessOnDemand"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := pd.NewPool(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				p.Close()
				t.Fatalf("NewPool(%+v) = %v, want %q", tt.cfg, err, tt.want)
			}
		})
	}
	a := newPool(t, pd, verbs.PoolConfig{BufSize: 64, Count: 1})
	b := newPool(t, pd, verbs.PoolConfig{BufSize: 64, Count: 1})
	buf, err := a.Get()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(buf); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("Put into another pool: %v", err)
	}
	if err := buf.Put(); err != nil {
		t.Fatal(err)
	}
}

// TestRDMAPoolODP: an ODP pool where the device has ODP; elsewhere the
// NotSupportedError before anything is registered.
func TestRDMAPoolODP(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	pd := newPD(t, ctx)
	caps, err := ctx.ODPCaps()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pd.NewPool(verbs.PoolConfig{BufSize: 4096, Count: 2, Access: verbs.AccessLocalWrite | verbs.AccessOnDemand, ODPOps: verbs.ODPWrite})
	if caps.Supported && caps.RC&verbs.ODPWrite != 0 {
		if err != nil {
			t.Fatalf("%s has ODP, but: %v", ctx.Name(), err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	var ne *verbs.NotSupportedError
	if err == nil || !errors.As(err, &ne) || !errors.Is(err, verbs.ErrNotSupported) || !strings.Contains(err.Error(), "not supported by "+ctx.Name()) {
		t.Fatalf("ODP pool on %s: %v, want a NotSupportedError", ctx.Name(), err)
	}
	if !caps.Supported && err.Error() != "ODP not supported by "+ctx.Name() {
		t.Fatalf("ODP pool: %q, want exactly %q", err, "ODP not supported by "+ctx.Name())
	}
}

// TestRDMAPoolEngine runs engines on pool buffers: WRITE bandwidth and READ
// latency, pooled and with per-operation registration, and checks that the
// per-op MRs are gone afterwards (the PD closes).
func TestRDMAPoolEngine(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	for _, tt := range []struct {
		name  string
		op    verbs.Opcode
		bw    bool
		perOp bool
	}{
		{"write bw pooled", verbs.OpWrite, true, false},
		{"write bw per-op", verbs.OpWrite, true, true},
		{"read lat per-op", verbs.OpRead, false, true},
		{"fetch_add lat per-op", verbs.OpFetchAdd, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const size, area, iters = 4096, 4096, 300
			a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 4096, Access: verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic, Depth: 32})
			pa := newPool(t, a.PD, verbs.PoolConfig{BufSize: 2 * area, Count: 1, Access: verbs.AccessLocalWrite})
			pb := newPool(t, b.PD, verbs.PoolConfig{BufSize: 2 * area, Count: 1,
				Access: verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic})
			la, err := pa.Get()
			if err != nil {
				t.Fatal(err)
			}
			defer la.Put()
			rb, err := pb.Get()
			if err != nil {
				t.Fatal(err)
			}
			defer rb.Put()
			cfg := verbs.EngineConfig{QP: a.QP, MR: la, Op: tt.op, Size: size, RecvOffset: area, RemoteAddr: rb.Addr() + area,
				RKey: rb.RKey(), TxDepth: 16, CQMod: 4, RxDepth: 1, Timeout: 5 * time.Second, Samples: iters}
			if tt.op == verbs.OpFetchAdd {
				cfg.Size = 8
			}
			if !tt.bw {
				cfg.TxDepth, cfg.CQMod = 1, 1
			}
			var opBuf *verbs.Buffer
			if tt.perOp {
				if opBuf, err = verbs.AllocBuffer(2*area, false); err != nil {
					t.Fatal(err)
				}
				defer opBuf.Close()
				cfg.PerOp = &verbs.PerOp{PD: a.PD, Buf: opBuf}
				bad := cfg
				bad.PerOp = &verbs.PerOp{PD: b.PD, Buf: opBuf}
				if _, err := verbs.NewEngine(bad); err == nil || !strings.Contains(err.Error(), "not the QP's") {
					t.Fatalf("per-op PD of another QP: %v", err)
				}
			}
			e, err := verbs.NewEngine(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.perOp {
				if err := a.PD.Close(); err == nil {
					t.Fatal("PD closed under a per-op engine")
				}
			}
			if tt.bw {
				e.SetTarget(iters)
				for e.Completed() < iters {
					e.ResetSamples()
					if _, err := e.BWClient(verbs.Now() + int64(time.Second)); err != nil {
						t.Fatal(err)
					}
				}
			} else if err := e.LatClient(iters); err != nil {
				t.Fatal(err)
			}
			if tt.op == verbs.OpFetchAdd && rb.Bytes()[area] != byte(iters%256) { // little-endian counter
				t.Fatalf("remote counter low byte %d after %d fetch_adds", rb.Bytes()[area], iters)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkRDMAPoolGetPut: one Get and one Put; nothing is registered and
// nothing allocated.
func BenchmarkRDMAPoolGetPut(b *testing.B) {
	ctx := testutil.RequireRDMA(b)
	pd := newPD(b, ctx)
	p := newPool(b, pd, verbs.PoolConfig{BufSize: 4096, Count: 64, Access: verbs.AccessLocalWrite})
	b.ReportAllocs()
	for b.Loop() {
		buf, err := p.Get()
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Put(buf); err != nil {
			b.Fatal(err)
		}
	}
}
