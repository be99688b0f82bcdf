package bench

import (
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

type countAbort struct{ n atomic.Int32 }

func (c *countAbort) Abort() { c.n.Add(1) }

// TestServerWatch: the client's watch of the control connection takes the
// server's heartbeats, passes its result on, and aborts the test with a
// typed cause when the connection closes, the heartbeat stops or the
// server sends its error.
func TestServerWatch(t *testing.T) {
	old := heartbeatTimeout
	heartbeatTimeout = 300 * time.Millisecond
	t.Cleanup(func() { heartbeatTimeout = old })
	alive := func(s *proto.Conn) { s.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseAlive}) }
	for _, tt := range []struct {
		name   string
		server func(s *proto.Conn)
		want   string // in the error; "" for the result
		lost   bool   // a *PeerLostError
	}{
		{"result after heartbeats", func(s *proto.Conn) {
			alive(s)
			alive(s)
			s.Send(proto.MsgResult, proto.ServerResult{Iterations: 7})
		}, "", false},
		{"connection closed", func(s *proto.Conn) {
			alive(s)
			s.Close()
		}, "server pipe lost: control connection closed", true},
		{"heartbeat stops", func(s *proto.Conn) {
			alive(s)
			time.Sleep(2 * time.Second)
			s.Close()
		}, "no heartbeat from the server for 300ms", true},
		{"server error", func(s *proto.Conn) {
			alive(s)
			s.SendError(errors.New("async event IBV_EVENT_PORT_ERR on rxe1 port 1"))
		}, "IBV_EVENT_PORT_ERR", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			srv := proto.NewConn(b, time.Second)
			defer srv.Close()
			cl := &Client{c: proto.NewConn(a, time.Second), peer: "pipe"}
			defer cl.c.Close()
			loop := &countAbort{}
			ab := newTestAbort(loop)
			w := watchServer(cl.c, cl.peer, ab)
			go tt.server(srv)
			start := time.Now()
			var sr proto.ServerResult
			err := w.next(proto.MsgResult, &sr, 5*time.Second)
			if tt.want == "" {
				if err != nil || sr.Iterations != 7 || loop.n.Load() != 0 {
					t.Fatalf("next = %v, %+v, %d aborts", err, sr, loop.n.Load())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("next = %v, want an error with %q", err, tt.want)
			}
			var pl *PeerLostError
			if errors.As(err, &pl) != tt.lost {
				t.Errorf("%v: PeerLostError %v, want %v", err, !tt.lost, tt.lost)
			}
			if loop.n.Load() != 1 || ab.err(nil) == nil {
				t.Errorf("%d aborts, cause %v", loop.n.Load(), ab.err(nil))
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if tt.lost && w.causeWithin(ab, errors.New("loop"), time.Second) == nil {
				t.Error("causeWithin does not report the lost server")
			}
		})
	}
}

// TestTestAbort: the first cause wins, except that this side's own device
// event replaces the server's error; after disarm nothing is aborted.
func TestTestAbort(t *testing.T) {
	loop := &countAbort{}
	ab := newTestAbort(loop)
	if got := ab.err(errors.New("own")); got.Error() != "own" {
		t.Fatalf("no cause: %v", got)
	}
	remote := &proto.RemoteError{Msg: "server: aborted"}
	event := &verbs.AsyncEventError{Event: verbs.AsyncEvent{Type: verbs.IBV_EVENT_PORT_ERR, Device: "rxe1", Port: 1}}
	ab.abort(remote)
	ab.abort(event)
	ab.abort(errors.New("later"))
	if got := ab.err(nil); got != event {
		t.Fatalf("cause %v, want the device event", got)
	}
	ab.disarm()
	ab.abort(errors.New("after"))
	if loop.n.Load() != 3 {
		t.Errorf("%d aborts, want 3 (none after disarm)", loop.n.Load())
	}
}
