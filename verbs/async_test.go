package verbs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestAsyncEventNames(t *testing.T) {
	for _, tt := range []struct {
		ev    verbs.AsyncEvent
		want  string
		fatal bool
	}{
		{verbs.AsyncEvent{Type: verbs.IBV_EVENT_PORT_ERR, Device: "rxe1", Port: 1}, "IBV_EVENT_PORT_ERR on rxe1 port 1", true},
		{verbs.AsyncEvent{Type: verbs.IBV_EVENT_PORT_ACTIVE, Device: "rxe1", Port: 1}, "IBV_EVENT_PORT_ACTIVE on rxe1 port 1", false},
		{verbs.AsyncEvent{Type: verbs.IBV_EVENT_QP_FATAL, Device: "rxe0", QPN: 0x11, HasQP: true}, "IBV_EVENT_QP_FATAL on rxe0 QP 0x11", true},
		{verbs.AsyncEvent{Type: verbs.IBV_EVENT_CQ_ERR, Device: "rxe0"}, "IBV_EVENT_CQ_ERR on rxe0", true},
		{verbs.AsyncEvent{Type: verbs.IBV_EVENT_DEVICE_FATAL, Device: "mlx5_0"}, "IBV_EVENT_DEVICE_FATAL on mlx5_0", true},
		{verbs.AsyncEvent{Type: verbs.IBV_EVENT_COMM_EST, Device: "rxe0", HasQP: true, QPN: 1}, "IBV_EVENT_COMM_EST on rxe0 QP 0x1", false},
		{verbs.AsyncEvent{Type: 99, Device: "x"}, "ibv_event_type(99) on x", false},
	} {
		if got := tt.ev.String(); got != tt.want {
			t.Errorf("%v: String() = %q, want %q", tt.ev.Type, got, tt.want)
		}
		if tt.ev.Fatal() != tt.fatal {
			t.Errorf("%s: Fatal() = %v, want %v", tt.want, tt.ev.Fatal(), tt.fatal)
		}
		var err error = &verbs.AsyncEventError{Event: tt.ev}
		if !strings.HasPrefix(err.Error(), "async event "+tt.want) {
			t.Errorf("error %q does not name the event", err)
		}
	}
}

// TestRDMAAsyncWatcher: a watcher stops at once and releases its context
// (the context's Close fails while it runs), and it delivers a real event:
// a CQ that overflows raises IBV_EVENT_CQ_ERR (rxe).
func TestRDMAAsyncWatcher(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	w, err := ctx.WatchAsyncEvents(func(verbs.AsyncEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err == nil {
		t.Fatal("the context closed under a running watcher")
	}
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("watcher took %v to stop", d)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	if !strings.HasPrefix(ctx.Name(), "rxe") {
		t.Skipf("%s: the CQ overflow event is checked on rxe", ctx.Name())
	}
	events := make(chan verbs.AsyncEvent, 16)
	w, err = ctx.WatchAsyncEvents(func(e verbs.AsyncEvent) {
		select {
		case events <- e:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "async watcher", w) // before the pair's objects: cleanups run in reverse
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 4096, Access: verbs.AccessRemoteWrite, Depth: 4})
	// signaled WRITEs, never polled: the send CQ (8 entries) overflows
	deadline := time.Now().Add(5 * time.Second)
	for posted := 0; time.Now().Before(deadline); {
		select {
		case e := <-events:
			if e.Type != verbs.IBV_EVENT_CQ_ERR || !e.Fatal() || e.Device != ctx.Name() {
				t.Fatalf("event %v, want IBV_EVENT_CQ_ERR on %s", e, ctx.Name())
			}
			t.Logf("after %d signaled WRITEs: %v", posted, &verbs.AsyncEventError{Event: e})
			return
		default:
		}
		err := a.QP.PostSend(verbs.SendWR{Op: verbs.OpWrite, MR: a.MR, Len: 8, RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), Signaled: true})
		if err == nil {
			posted++
		} else if !errors.Is(err, verbs.ErrClosed) {
			time.Sleep(5 * time.Millisecond) // the send queue is full: let it drain
		}
	}
	t.Fatal("no IBV_EVENT_CQ_ERR within 5 s of overflowing a CQ")
}
