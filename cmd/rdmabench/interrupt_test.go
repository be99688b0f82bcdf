package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/sockeng"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestExitCodeEndings: how a run that ended early exits. A lost server is
// the peer code even when the data path failed with it; a fatal async
// event is a data-path failure; signals are 128+N; --run-timeout is
// exitTimeout.
func TestExitCodeEndings(t *testing.T) {
	lost := &kinds.PeerLostError{Peer: "h:1", Reason: "control connection closed", Err: &proto.Error{Op: "waiting", Err: io.EOF}}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{lost, exitPeer},
		{fmt.Errorf("%w (data path: %w)", lost, sockeng.ErrPeerClosed), exitPeer},
		{&kinds.PeerLostError{Reason: "no heartbeat", Err: os.ErrDeadlineExceeded}, exitPeer},
		{&verbs.AsyncEventError{Event: verbs.AsyncEvent{Type: verbs.IBV_EVENT_PORT_ERR, Device: "rxe1", Port: 1}}, exitTransport},
		{&signalError{sig: syscall.SIGINT}, 130},
		{&signalError{sig: syscall.SIGTERM}, 143},
		{&runTimeoutError{limit: time.Second}, exitTimeout},
	} {
		if got := exitCode(fmt.Errorf("write bw 64KiB: %w", tc.err)); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestEndedEarly: a run cut short reports why its context ended.
func TestEndedEarly(t *testing.T) {
	ctx, cancel := withRunTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	err := endedEarly(ctx, errors.New("write bw: aborted"))
	var rte *runTimeoutError
	if !errors.As(err, &rte) || !errors.Is(err, context.DeadlineExceeded) || exitCode(err) != exitTimeout {
		t.Fatalf("endedEarly = %v", err)
	}
	if endedEarly(ctx, nil) != nil {
		t.Error("a finished run became an error")
	}
	live, cancel2 := withRunTimeout(context.Background(), 0)
	defer cancel2()
	if e := errors.New("x"); endedEarly(live, e) != e {
		t.Error("an unbounded live run's error changed")
	}
	if !errors.Is(&signalError{sig: syscall.SIGINT}, context.Canceled) {
		t.Error("signalError does not unwrap to context.Canceled")
	}
}
