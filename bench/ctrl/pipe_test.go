package ctrl_test

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// pairs are both implementations: each case runs on each.
var pairs = map[string]func(t *testing.T) (ctrl.Chan, ctrl.Chan){
	"pipe": func(*testing.T) (ctrl.Chan, ctrl.Chan) { return ctrl.Pipe(time.Second) },
	"proto.Conn": func(t *testing.T) (ctrl.Chan, ctrl.Chan) { // over TCP on 127.0.0.1, as in production
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skip(err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			accepted <- c
		}()
		a, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		b := <-accepted
		if b == nil {
			t.Fatal("no connection accepted")
		}
		return proto.NewConn(a, time.Second), proto.NewConn(b, time.Second)
	},
}

// TestChanBehaviour: the in-memory Pipe answers as a proto.Conn does:
// messages in order, the peer's error as a *proto.RemoteError, a wrong
// type as ErrUnexpectedType, a silent peer as os.ErrDeadlineExceeded, a
// closed peer as io.EOF, a closed end as net.ErrClosed.
func TestChanBehaviour(t *testing.T) {
	for name, pair := range pairs {
		t.Run(name, func(t *testing.T) {
			cl, sv := pair(t)
			defer cl.Close()
			defer sv.Close()
			sent := make(chan error, 1)
			go func() {
				err := errors.Join(
					cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseAlive}),
					cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: 7}),
					cl.Send(proto.MsgResult, proto.ServerResult{Iterations: 3}),
					cl.SendError(&proto.RemoteError{Code: "busy", Msg: "serving another client"}),
				)
				sent <- err
			}()
			ty, payload, err := sv.RecvAny(time.Second)
			var r proto.Ready
			if err != nil || ty != proto.MsgReady || sv.Decode(ty, payload, &r) != nil || r.Phase != proto.PhaseAlive {
				t.Fatalf("RecvAny = %v, %v, %+v", ty, err, r)
			}
			if err := sv.Recv(proto.MsgReady, &r); err != nil || r.Phase != proto.PhaseEnd || r.Total != 7 {
				t.Fatalf("Recv = %v, %+v", err, r)
			}
			if err := sv.Recv(proto.MsgReady, &r); !errors.Is(err, proto.ErrUnexpectedType) {
				t.Fatalf("Recv of a result as ready = %v, want ErrUnexpectedType", err)
			}
			var re *proto.RemoteError
			if err := sv.Recv(proto.MsgReady, &r); !errors.As(err, &re) || re.Code != "busy" {
				t.Fatalf("Recv of an error = %v, want the RemoteError", err)
			}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := sv.RecvTimeout(proto.MsgReady, &r, 50*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("silent peer: %v, want os.ErrDeadlineExceeded", err)
			}
			if d := time.Since(start); d < 40*time.Millisecond || d > 2*time.Second {
				t.Errorf("the deadline of 50ms passed after %v", d)
			}
			cl.Close()
			if err := sv.Recv(proto.MsgReady, &r); !errors.Is(err, io.EOF) {
				t.Fatalf("closed peer: %v, want io.EOF", err)
			}
			if err := cl.Send(proto.MsgReady, nil); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("send on a closed end: %v, want net.ErrClosed", err)
			}
		})
	}
}

// TestPipeKeepsMessagesSentBeforeClose: a peer's last messages before it
// closes are read before the end, as on a TCP connection.
func TestPipeKeepsMessagesSentBeforeClose(t *testing.T) {
	cl, sv := ctrl.Pipe(time.Second)
	defer sv.Close()
	for i := range 3 {
		if err := cl.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	for i := range 3 {
		var r proto.Ready
		if err := sv.Recv(proto.MsgReady, &r); err != nil || r.Total != int64(i) {
			t.Fatalf("message %d: %v, %+v", i, err, r)
		}
	}
	if err := sv.Send(proto.MsgReady, nil); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("send to a closed peer: %v, want io.ErrClosedPipe", err)
	}
	if _, _, err := sv.RecvAny(time.Second); !errors.Is(err, io.EOF) {
		t.Errorf("after the last message: %v, want io.EOF", err)
	}
	if sv.LocalAddr().String() != "127.0.0.1:1" || sv.RemoteAddr().String() != "127.0.0.1:2" || sv.Timeout() != time.Second {
		t.Errorf("server end: local %v remote %v timeout %v", sv.LocalAddr(), sv.RemoteAddr(), sv.Timeout())
	}
}
