package kinds

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// The sequencing of a running test on the control channel, over
// ctrl.Pipe: no RDMA, no sockets.

// shortHeartbeat makes the heartbeat deadline d for one test.
func shortHeartbeat(t *testing.T, d time.Duration) {
	old := ctrl.HeartbeatTimeout
	ctrl.HeartbeatTimeout = d
	t.Cleanup(func() { ctrl.HeartbeatTimeout = old })
}

// TestAwaitEndSequence: the server's wait for the client's end skips
// heartbeats, takes marks, returns the end; a silent client fails at the
// heartbeat deadline, a client's error as its RemoteError.
func TestAwaitEndSequence(t *testing.T) {
	shortHeartbeat(t, 200*time.Millisecond)
	t.Run("end", func(t *testing.T) {
		cl, sv := ctrl.Pipe(time.Second)
		defer cl.Close()
		cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseAlive})
		cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseMark, Mark: 1}) // no series: ignored
		cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: 42, Totals: []int64{40, 2}})
		var end proto.Ready
		if err := <-awaitEnd(sv, &end); err != nil || end.Total != 42 || len(end.Totals) != 2 {
			t.Fatalf("awaitEnd = %v, %+v", err, end)
		}
	})
	t.Run("silent client", func(t *testing.T) {
		cl, sv := ctrl.Pipe(time.Second)
		defer cl.Close()
		var end proto.Ready
		start := time.Now()
		if err := <-awaitEnd(sv, &end); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("awaitEnd = %v, want the heartbeat deadline", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a silent client noticed after %v", d)
		}
	})
	t.Run("client error", func(t *testing.T) {
		cl, sv := ctrl.Pipe(time.Second)
		defer cl.Close()
		cl.SendError(errors.New("measuring failed"))
		var end proto.Ready
		var re *proto.RemoteError
		if err := <-awaitEnd(sv, &end); !errors.As(err, &re) || re.Msg != "measuring failed" {
			t.Fatalf("awaitEnd = %v, want the client's error", err)
		}
	})
}

// TestReportLoopError: a server whose loop failed tells the client, then
// waits for the client's end, and the session stays in step.
func TestReportLoopError(t *testing.T) {
	shortHeartbeat(t, time.Second)
	cl, sv := ctrl.Pipe(time.Second)
	defer cl.Close()
	var end proto.Ready
	msgs := awaitEnd(sv, &end)
	done := make(chan error, 1)
	go func() { done <- reportLoopError(sv, errors.New("responder: IBV_WC_RETRY_EXC_ERR"), msgs) }()
	var r proto.Ready
	var re *proto.RemoteError
	if err := cl.Recv(proto.MsgReady, &r); !errors.As(err, &re) || !strings.Contains(re.Msg, "RETRY_EXC") {
		t.Fatalf("client got %v, want the server's loop error", err)
	}
	cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: 1})
	if err := <-done; err != nil {
		t.Fatalf("reportLoopError = %v, want nil (in step)", err)
	}
}

// TestReadBidirClientSequence: a bidirectional test's client says
// warmup, measure, end in that order (heartbeats anywhere, marks while
// measuring); any other order is an error.
func TestReadBidirClientSequence(t *testing.T) {
	shortHeartbeat(t, time.Second)
	ready := func(p string) proto.Ready { return proto.Ready{Phase: p} }
	for _, tt := range []struct {
		name string
		msgs []proto.Ready
		want string // "" for the end
	}{
		{"in order", []proto.Ready{ready(proto.PhaseAlive), ready(proto.PhaseWarmup), ready(proto.PhaseAlive), ready(proto.PhaseMeasure),
			{Phase: proto.PhaseMark, Mark: 1}, {Phase: proto.PhaseEnd, Total: 9}}, ""},
		{"measure before warmup", []proto.Ready{ready(proto.PhaseMeasure)}, `client sent "measure" in a bidirectional test, expected "warmup"`},
		{"end before measure", []proto.Ready{ready(proto.PhaseWarmup), ready(proto.PhaseEnd)}, `expected "measure"`},
		{"mark before measure", []proto.Ready{ready(proto.PhaseWarmup), {Phase: proto.PhaseMark, Mark: 1}}, `expected "measure"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cl, sv := ctrl.Pipe(time.Second)
			defer cl.Close()
			for _, m := range tt.msgs {
				cl.Send(proto.MsgReady, m)
			}
			warmup, measure := make(chan struct{}), make(chan struct{})
			var end proto.Ready
			err := readBidirClient(sv, warmup, measure, &end, nil)
			if tt.want == "" {
				if err != nil || end.Total != 9 {
					t.Fatalf("readBidirClient = %v, %+v", err, end)
				}
				<-warmup
				<-measure
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("readBidirClient = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRecvVerifySkipsHeartbeats: a verify step skips the peer's
// heartbeats and fails at the heartbeat deadline when they stop.
func TestRecvVerifySkipsHeartbeats(t *testing.T) {
	shortHeartbeat(t, 200*time.Millisecond)
	cl, sv := ctrl.Pipe(time.Second)
	defer cl.Close()
	cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseAlive})
	cl.Send(proto.MsgVerify, proto.Verify{QP: 1, Message: 3})
	var v proto.Verify
	if err := recvVerify(sv, &v, time.Second); err != nil || v.QP != 1 || v.Message != 3 {
		t.Fatalf("recvVerify = %v, %+v", err, v)
	}
	if err := recvVerify(sv, &v, 5*time.Second); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("recvVerify of a silent peer = %v, want the heartbeat deadline", err)
	}
}

// TestHeartbeatStops: heartbeat sends alive until stopped, and nothing
// after stop returns.
func TestHeartbeatStops(t *testing.T) {
	shortHeartbeat(t, 2*time.Second)
	defer func(e time.Duration) { ctrl.HeartbeatEvery = e }(ctrl.HeartbeatEvery)
	ctrl.HeartbeatEvery = 100 * time.Millisecond // the silence after stop: 2 of these
	cl, sv := ctrl.Pipe(time.Second)
	defer cl.Close()
	stop := Heartbeat(cl)
	var r proto.Ready
	if err := sv.RecvTimeout(proto.MsgReady, &r, 3*ctrl.HeartbeatEvery); err != nil || r.Phase != proto.PhaseAlive {
		t.Fatalf("first heartbeat: %v, %+v", err, r)
	}
	stop()
	stop() // idempotent
	for {
		if err := sv.RecvTimeout(proto.MsgReady, &r, 2*ctrl.HeartbeatEvery); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			break // none after stop
		}
	}
}
