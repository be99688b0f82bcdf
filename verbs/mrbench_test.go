package verbs_test

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestODPOpsString(t *testing.T) {
	for _, tt := range []struct {
		ops  verbs.ODPOps
		want string
	}{
		{0, "none"},
		{verbs.ODPWrite, "WRITE"},
		{verbs.ODPSend | verbs.ODPRecv | verbs.ODPWrite | verbs.ODPRead | verbs.ODPAtomic | verbs.ODPSRQRecv, "SEND|RECV|WRITE|READ|ATOMIC|SRQ_RECV"},
	} {
		if got := tt.ops.String(); got != tt.want {
			t.Errorf("ODPOps(%#x) = %q, want %q", uint32(tt.ops), got, tt.want)
		}
		var back verbs.ODPOps
		if err := back.UnmarshalText([]byte(tt.want)); err != nil || back != tt.ops {
			t.Errorf("UnmarshalText(%q) = %#x, %v; want %#x", tt.want, uint32(back), err, uint32(tt.ops))
		}
	}
}

func TestODPOpsUnmarshalBad(t *testing.T) {
	var o verbs.ODPOps
	if err := o.UnmarshalText([]byte("WRITE|FLY")); err == nil {
		t.Error("unknown operation accepted")
	}
}

func TestNotSupportedError(t *testing.T) {
	var err error = &verbs.NotSupportedError{Feature: "ODP", Device: "rxe0"}
	if err.Error() != "ODP not supported by rxe0" {
		t.Errorf("text %q", err)
	}
	if !errors.Is(err, verbs.ErrNotSupported) {
		t.Error("does not match ErrNotSupported")
	}
}

// median returns the middle of the sorted values.
func median(v []uint64) uint64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func newPD(t testing.TB, ctx *verbs.Context) *verbs.PD {
	t.Helper()
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "pd (MR leaked?)", pd)
	return pd
}

func newBuffer(t testing.TB, size int) *verbs.Buffer {
	t.Helper()
	buf, err := verbs.AllocBuffer(size, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Close() })
	return buf
}

func TestRDMAMRRegBench(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	pd := newPD(t, ctx)
	buf := newBuffer(t, 16<<20)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 50
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 16 << 20} {
		reg, dereg, err := pd.RegBench(buf, size, verbs.AccessLocalWrite, n, 0)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if len(reg) != n || len(dereg) != n {
			t.Fatalf("%d bytes: %d reg and %d dereg samples, want %d", size, len(reg), len(dereg), n)
		}
		for i := range reg {
			if reg[i] == 0 || dereg[i] == 0 || reg[i] > uint64(10*time.Second) || dereg[i] > uint64(10*time.Second) {
				t.Fatalf("%d bytes: sample %d implausible: reg %d ns, dereg %d ns", size, i, reg[i], dereg[i])
			}
		}
		t.Logf("%8d bytes: reg p50 %7.2f us, dereg p50 %7.2f us", size, float64(median(reg))/1e3, float64(median(dereg))/1e3)
	}

	// A time budget ends the loop early, after at least 2 pairs.
	start := time.Now()
	reg, _, err := pd.RegBench(buf, 4<<10, verbs.AccessLocalWrite, 1<<22, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(reg) < 2 || len(reg) == 1<<22 || time.Since(start) > 5*time.Second {
		t.Fatalf("budget of 50ms: %d pairs in %v", len(reg), time.Since(start))
	}

	// Bad input is refused before any C call.
	if _, _, err := pd.RegBench(buf, buf.Len()+1, verbs.AccessLocalWrite, 1, 0); err == nil {
		t.Error("registering past the buffer succeeded")
	}
	if _, _, err := pd.RegBench(buf, 4096, verbs.AccessLocalWrite, 0, 0); err == nil {
		t.Error("0 iterations accepted")
	}
	// REMOTE_WRITE without LOCAL_WRITE is invalid (ib_check_mr_access): a typed errno.
	_, _, err = pd.RegBench(buf, 4096, verbs.AccessRemoteWrite, 1, 0)
	var ve *verbs.Error
	if !errors.As(err, &ve) || ve.Op != "ibv_reg_mr" || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("REMOTE_WRITE without LOCAL_WRITE: %v, want *verbs.Error ibv_reg_mr EINVAL", err)
	}
}

// mrPair connects two RC QPs; the peer b grants REMOTE_WRITE on its MR.
func mrPair(t testing.TB, ctx *verbs.Context, size int) (a, b *testutil.Side, src *verbs.Buffer) {
	t.Helper()
	a, b = testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: size, Access: verbs.AccessRemoteWrite})
	return a, b, newBuffer(t, size)
}

func newLoop(t testing.TB, a, b *testutil.Side, src *verbs.Buffer, size int, perOp bool, samples int) *verbs.MROpLoop {
	t.Helper()
	l, err := verbs.NewMROpLoop(verbs.MROpConfig{QP: a.QP, Buf: src, PerOp: perOp, Size: size,
		RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), Timeout: 5 * time.Second, Samples: samples})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "loop", l)
	return l
}

func TestRDMAMROpLoop(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const size, n = 4096, 500
	a, b, src := mrPair(t, ctx, size)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p50, least := map[string]uint64{}, map[string]uint64{}
	for i, perOp := range []bool{false, true} {
		fill(src.Bytes(), i+1)
		l := newLoop(t, a, b, src, size, perOp, n)
		if err := l.Run(20); err != nil { // warm-up
			t.Fatalf("%s: %v", l.Mode(), err)
		}
		l.Reset()
		if err := l.Run(n); err != nil {
			t.Fatalf("%s: %v", l.Mode(), err)
		}
		s := l.Samples()
		if len(s) != n || l.Operations() != n+20 {
			t.Fatalf("%s: %d samples, %d operations; want %d and %d", l.Mode(), len(s), l.Operations(), n, n+20)
		}
		first, last := l.Span()
		var sum uint64
		for _, v := range s {
			sum += v
		}
		if first <= 0 || last <= first || uint64(last-first) < sum {
			t.Fatalf("%s: span %d..%d shorter than the %d ns the operations took", l.Mode(), first, last, sum)
		}
		if !bytes.Equal(b.Buf.Bytes()[:size], src.Bytes()[:size]) {
			t.Fatalf("%s: the peer's buffer does not hold the written data", l.Mode())
		}
		p50[l.Mode()], least[l.Mode()] = median(s), slices.Min(s)
		t.Logf("%-6s: p50 %7.2f us, %.0f ops/s", l.Mode(), float64(median(s))/1e3, float64(n)/(float64(last-first)/1e9))
		if err := l.Run(1); err == nil {
			t.Errorf("%s: a run past the sample buffer succeeded", l.Mode())
		}
	}
	// the fastest operations: a host stall only slows operations down, so
	// it can lift one mode's median but not its minimum; every per-op
	// operation registers and deregisters
	if least["per-op"] <= least["pooled"] {
		t.Errorf("per-op fastest %d ns (p50 %d) is not above pooled fastest %d ns (p50 %d): registration should cost something",
			least["per-op"], p50["per-op"], least["pooled"], p50["pooled"])
	}
}

func TestRDMAMROpWrongRKey(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	a, b, src := mrPair(t, ctx, 4096)
	l, err := verbs.NewMROpLoop(verbs.MROpConfig{QP: a.QP, Buf: src, PerOp: true, Size: 4096,
		RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey() ^ 0xff00, Timeout: 5 * time.Second, Samples: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Run(1)
	var wce *verbs.WCError
	if !errors.As(err, &wce) || wce.Status != verbs.WCRemAccessErr || wce.Opcode != verbs.OpWrite {
		t.Fatalf("WRITE with a wrong rkey: %v, want *WCError IBV_WC_REM_ACCESS_ERR (RDMA_WRITE)", err)
	}
	// The per-op MR was deregistered despite the error: the PD closes at cleanup.
}

func TestRDMAMRODP(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	caps, err := ctx.ODPCaps()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s ODP caps: %+v", ctx.Name(), caps)
	pd := newPD(t, ctx)
	buf := newBuffer(t, 64<<10)
	odp := verbs.AccessLocalWrite | verbs.AccessOnDemand
	if caps.Supported {
		if _, _, err := pd.RegBench(buf, buf.Len(), odp, 10, 0); err != nil {
			t.Fatalf("%s reports ODP support, but ODP registration failed: %v", ctx.Name(), err)
		}
		return
	}
	want := "ODP not supported by " + ctx.Name()
	check := func(what string, err error) {
		t.Helper()
		var ns *verbs.NotSupportedError
		if err == nil || err.Error() != want || !errors.Is(err, verbs.ErrNotSupported) || !errors.As(err, &ns) {
			t.Errorf("%s: %v, want exactly %q matching ErrNotSupported", what, err, want)
		}
	}
	check("CheckODP", ctx.CheckODP(0))
	_, _, err = pd.RegBench(buf, buf.Len(), odp, 10, 0)
	check("RegBench", err)
	a, b, src := mrPair(t, ctx, 4096)
	for _, perOp := range []bool{false, true} {
		_, err := verbs.NewMROpLoop(verbs.MROpConfig{QP: a.QP, Buf: src, PerOp: perOp, Access: odp, Size: 4096,
			RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), Samples: 4})
		check("NewMROpLoop", err)
	}
	// The kernel agrees: it refuses ON_DEMAND (EINVAL on 6.1, EOPNOTSUPP from 6.2).
	mr, err := pd.RegisterMR(buf, 0, buf.Len(), odp)
	if err == nil {
		mr.Close()
		t.Fatalf("%s: ODP registration succeeded although odp_caps says unsupported", ctx.Name())
	}
	if !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("raw ODP registration: %v, want EINVAL or EOPNOTSUPP", err)
	}
	if strings.HasPrefix(ctx.Name(), "rxe") {
		t.Logf("rxe: %v; kernel: %v", ctx.CheckODP(0), err)
	}
}

func BenchmarkRDMAMRRegDereg(b *testing.B) {
	ctx := testutil.RequireRDMA(b)
	pd := newPD(b, ctx)
	buf := newBuffer(b, 1<<20)
	for _, tt := range []struct {
		name string
		size int
	}{{"4K", 4 << 10}, {"1M", 1 << 20}} {
		size := tt.size
		b.Run(tt.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			reg, dereg, err := pd.RegBench(buf, size, verbs.AccessLocalWrite, b.N, 0)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(median(reg)), "reg-p50-ns")
			b.ReportMetric(float64(median(dereg)), "dereg-p50-ns")
		})
	}
}

func BenchmarkRDMAMRWrite(b *testing.B) {
	ctx := testutil.RequireRDMA(b)
	const size = 4096
	a, p, src := mrPair(b, ctx, size)
	for _, perOp := range []bool{false, true} {
		name := "pooled"
		if perOp {
			name = "per-op"
		}
		b.Run(name, func(b *testing.B) {
			l := newLoop(b, a, p, src, size, perOp, 4096)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			for left := b.N; left > 0; {
				n := min(left, l.Capacity())
				l.Reset()
				if err := l.Run(n); err != nil {
					b.Fatal(err)
				}
				left -= n
			}
			b.StopTimer()
			b.ReportMetric(float64(median(l.Samples())), "p50-ns")
		})
	}
}
