package verbs_test

import (
	"math"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAEnginePace: a paced WRITE stream runs at the rate asked (far
// below what the device does unpaced), measured first post to last
// completion.
func TestRDMAEnginePace(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const size, n, rate = 1024, 400, 2000.0 // 400 ops at 2000/s: 0.2 s
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * size, Access: verbs.AccessRemoteWrite, Depth: 128})
	e, err := verbs.NewEngine(verbs.EngineConfig{QP: a.QP, MR: a.MR, Op: verbs.OpWrite, Size: size, RecvOffset: size,
		RemoteAddr: b.MR.Addr() + size, RKey: b.MR.RKey(), TxDepth: 64, CQMod: 8, RxDepth: 16,
		Timeout: 5 * time.Second, Samples: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.SetPace(rate)
	e.SetTarget(n)
	for e.Completed() < n {
		if _, err := e.BWClient(verbs.Now() + int64(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	first, last := e.Span()
	got := float64(n-1) / (float64(last-first) / 1e9) // n posts span n-1 gaps
	t.Logf("paced at %.0f/s: %.0f/s over %.1f ms", rate, got, float64(last-first)/1e6)
	if math.Abs(got/rate-1) > 0.05 {
		t.Errorf("rate %.0f/s, want %.0f/s within 5 %%", got, rate)
	}
}
