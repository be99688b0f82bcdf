package verbs_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAEngineBidirSend runs the bidirectional SEND loop on both ends of
// one RC pair at once, with far fewer receives posted than messages: each
// side must keep re-posting while it sends, or the other stalls on RNR.
// Each side sends n, then receives until the stop count (the peer's n).
func TestRDMAEngineBidirSend(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const size, n, depth, rx = 4096, 3000, 32, 16
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * size, Depth: 64})
	mk := func(s *testutil.Side) *verbs.Engine {
		e, err := verbs.NewEngine(verbs.EngineConfig{QP: s.QP, MR: s.MR, Op: verbs.OpSend, Size: size, RecvOffset: size,
			TxDepth: depth, CQMod: 8, RxDepth: rx, Timeout: 5 * time.Second, Samples: 1024})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		if err := e.PostRecvs(rx); err != nil {
			t.Fatal(err)
		}
		return e
	}
	engs := []*verbs.Engine{mk(a), mk(b)}
	done := make(chan error, 2)
	for _, e := range engs {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			e.SetTarget(n)
			for e.Completed() < n { // sends (and receives) until its own are complete
				e.ResetSamples()
				if _, err := e.BidirSend(verbs.Now() + int64(time.Second)); err != nil {
					done <- err
					return
				}
			}
			e.SetStop(n)
			_, err := e.BidirSend(verbs.Now() + int64(10*time.Second)) // then receives until the peer's n arrived
			done <- err
		}()
	}
	for range engs {
		if err := <-done; err != nil {
			for _, e := range engs {
				e.Abort()
			}
			t.Fatal(err)
		}
	}
	for i, e := range engs {
		first, last := e.Span()
		if e.Posted() != n || e.Completed() != n || e.Iterations() != n || last <= first {
			t.Errorf("side %d: posted %d, completed %d, received %d, span %d..%d; want %d each", i, e.Posted(), e.Completed(), e.Iterations(), first, last, n)
		}
		t.Logf("side %d: %d x %d B sent and received in %.2f ms", i, n, size, float64(last-first)/1e6)
	}
}

// TestRDMAEngineBidirSendRefused: the bidirectional loop is SEND only.
func TestRDMAEngineBidirSendRefused(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 8192, Access: verbs.AccessRemoteWrite})
	e, err := verbs.NewEngine(verbs.EngineConfig{QP: a.QP, MR: a.MR, Op: verbs.OpWrite, Size: 64, RecvOffset: 4096,
		RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), TxDepth: 4, CQMod: 1, RxDepth: 1, Samples: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.BidirSend(verbs.Now()); err == nil || !strings.Contains(err.Error(), "SEND engine") {
		t.Fatalf("BidirSend on a WRITE engine = %v, want a refusal", err)
	}
}
