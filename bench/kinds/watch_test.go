package kinds

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
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
	old := ctrl.HeartbeatTimeout
	ctrl.HeartbeatTimeout = 300 * time.Millisecond
	t.Cleanup(func() { ctrl.HeartbeatTimeout = old })
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
			c := proto.NewConn(a, time.Second)
			defer c.Close()
			loop := &countAbort{}
			ab := NewTestAbort(loop)
			w := WatchServer(c, "pipe", ab)
			go tt.server(srv)
			start := time.Now()
			var sr proto.ServerResult
			err := w.Next(proto.MsgResult, &sr, 5*time.Second)
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
			if loop.n.Load() != 1 || ab.Err(nil) == nil {
				t.Errorf("%d aborts, cause %v", loop.n.Load(), ab.Err(nil))
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if tt.lost && w.CauseWithin(ab, errors.New("loop"), time.Second) == nil {
				t.Error("causeWithin does not report the lost server")
			}
		})
	}
}

// TestTestAbort: the first cause wins, except that this side's own device
// event replaces the server's error; after disarm nothing is aborted.
func TestTestAbort(t *testing.T) {
	loop := &countAbort{}
	ab := NewTestAbort(loop)
	if got := ab.Err(errors.New("own")); got.Error() != "own" {
		t.Fatalf("no cause: %v", got)
	}
	remote := &proto.RemoteError{Msg: "server: aborted"}
	event := &verbs.AsyncEventError{Event: verbs.AsyncEvent{Type: verbs.IBV_EVENT_PORT_ERR, Device: "rxe1", Port: 1}}
	ab.Abort(remote)
	ab.Abort(event)
	ab.Abort(errors.New("later"))
	if got := ab.Err(nil); got != event {
		t.Fatalf("cause %v, want the device event", got)
	}
	ab.Disarm()
	ab.Abort(errors.New("after"))
	if loop.n.Load() != 3 {
		t.Errorf("%d aborts, want 3 (none after disarm)", loop.n.Load())
	}
}

// lateChan is a control channel whose waits end late, as on a host that
// froze while the wait ran: RecvAny returns its deadline error (or the
// closed connection) only late past the deadline; with beat, the late wait
// returns a heartbeat buffered meanwhile and the next the close, at once.
type lateChan struct {
	ctrl.Chan
	late   time.Duration
	closed bool // the server closed the connection meanwhile
	beat   bool
	calls  int
}

func (c *lateChan) RecvAny(d time.Duration) (proto.MsgType, []byte, error) {
	c.calls++
	if c.beat && c.calls > 1 {
		return 0, nil, io.EOF
	}
	time.Sleep(d + c.late)
	switch {
	case c.beat:
		b, err := json.Marshal(proto.Ready{Phase: proto.PhaseAlive})
		return proto.MsgReady, b, err
	case c.closed:
		return 0, nil, io.EOF
	}
	return 0, nil, &net.OpError{Op: "read", Net: "pipe", Err: os.ErrDeadlineExceeded}
}

// TestWatchStoodStill: a wait for the server's heartbeat that ends
// StoodStill or more past its deadline says this side stood still; one
// that ends on time says only that the heartbeat stopped.
func TestWatchStoodStill(t *testing.T) {
	old, oldStill := ctrl.HeartbeatTimeout, StoodStill
	ctrl.HeartbeatTimeout, StoodStill = 100*time.Millisecond, 250*time.Millisecond
	t.Cleanup(func() { ctrl.HeartbeatTimeout, StoodStill = old, oldStill })
	dropped := "this host stood still (frozen or starved), and the server, missing this side's heartbeats as long, may have dropped it"
	for _, tc := range []struct {
		late         time.Duration
		closed, beat bool
		want         string // "": no note
	}{
		{0, false, false, ""},
		{600 * time.Millisecond, false, false, "this host stood still (frozen or starved), and the server's heartbeats may have been on their way"},
		{0, true, false, ""},
		{600 * time.Millisecond, true, false, dropped},
		{600 * time.Millisecond, true, true, dropped},
	} {
		c, _ := ctrl.Pipe(time.Second)
		w := WatchServer(&lateChan{Chan: c, late: tc.late, closed: tc.closed, beat: tc.beat}, "pipe", NewTestAbort())
		err := w.Next(proto.MsgResult, nil, 5*time.Second)
		var pl *PeerLostError
		if !errors.As(err, &pl) {
			t.Fatalf("%+v: %v, want a lost server", tc, err)
		}
		if got := strings.Contains(err.Error(), "this host stood still"); got != (tc.want != "") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want a note %q", tc, err, tc.want)
		}
	}
}
