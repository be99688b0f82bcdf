package verbs_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// peakWriter is a bandwidth WRITE engine of 2-byte messages on a fresh
// pair, CQ moderation cqMod.
func peakWriter(tb testing.TB, cqMod int) *verbs.Engine {
	ctx := testutil.RequireRDMA(tb)
	a, b := testutil.NewPair(tb, ctx, testutil.PairConfig{BufSize: 8192, Access: verbs.AccessRemoteWrite, Depth: 128})
	e, err := verbs.NewEngine(verbs.EngineConfig{QP: a.QP, MR: a.MR, Op: verbs.OpWrite, Size: 2, RecvOffset: 4096,
		RemoteAddr: b.MR.Addr() + 4096, RKey: b.MR.RKey(), TxDepth: 128, CQMod: cqMod, RxDepth: 1,
		Timeout: 5 * time.Second, Samples: 1 << 16})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// runWrites posts n WRITEs from the engine's counters' reset.
func runWrites(tb testing.TB, e *verbs.Engine, n int) {
	e.ResetCounters()
	e.SetTarget(uint64(n))
	for e.Completed() < uint64(n) {
		e.ResetSamples()
		if _, err := e.BWClient(verbs.Now() + int64(time.Second)); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRDMAEnginePeakStamps: with stamps on, every post and every signaled
// completion has its time, in order; off, nothing is written.
func TestRDMAEnginePeakStamps(t *testing.T) {
	const n, cqMod = 1000, 8
	e := peakWriter(t, cqMod)
	buf, err := verbs.AllocBuffer(16*n, false)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if err := e.SetPeakStamps(buf, n); err != nil {
		t.Fatal(err)
	}
	runWrites(t, e, n)
	posted, completed := e.PeakStamps()
	if len(posted) != n || len(completed) != n {
		t.Fatalf("%d posted, %d completed stamps", len(posted), len(completed))
	}
	for k := range n {
		if posted[k] == 0 || (k > 0 && posted[k] < posted[k-1]) {
			t.Fatalf("post stamp %d = %d (before: %d)", k, posted[k], posted[max(k-1, 0)])
		}
		signaled := (k+1)%cqMod == 0 || k == n-1
		if (completed[k] != 0) != signaled {
			t.Fatalf("completion stamp %d = %d (signaled %v)", k, completed[k], signaled)
		}
		if signaled && completed[k] < posted[k] {
			t.Fatalf("message %d completed at %d before its post at %d", k, completed[k], posted[k])
		}
	}
	if err := e.SetPeakStamps(nil, 0); err != nil {
		t.Fatal(err)
	}
	clear(buf.Bytes())
	runWrites(t, e, n)
	for i, b := range buf.Bytes() {
		if b != 0 {
			t.Fatalf("stamps off: byte %d written", i)
		}
	}
	if err := e.SetPeakStamps(buf, buf.Len()/16+1); err == nil { // (the buffer is whole pages)
		t.Error("stamps beyond the buffer accepted")
	}
}

// BenchmarkRDMAEngineBWPeakStamps: the WRITE bandwidth loop with perftest's
// peak stamps off (the default: one compare per work request) and on.
// ns/op is per 2-byte WRITE.
func BenchmarkRDMAEngineBWPeakStamps(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("stamps=%v", on), func(b *testing.B) {
			e := peakWriter(b, 100)
			buf, err := verbs.AllocBuffer(16*b.N, false)
			if err != nil {
				b.Fatal(err)
			}
			defer buf.Close()
			if on {
				if err := e.SetPeakStamps(buf, b.N); err != nil {
					b.Fatal(err)
				}
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			runWrites(b, e, b.N)
			b.StopTimer()
			e.SetPeakStamps(nil, 0) //nolint:errcheck // off never fails
		})
	}
}
