package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// TestFinishTestSequence: the client's end of a test: the end with its
// totals, then the server's result; or, when its loop failed, its error
// to the server, whose answer keeps the session in step.
func TestFinishTestSequence(t *testing.T) {
	old := ctrl.HeartbeatTimeout
	ctrl.HeartbeatTimeout = time.Second
	t.Cleanup(func() { ctrl.HeartbeatTimeout = old })
	t.Run("end and result", func(t *testing.T) {
		c, sv := ctrl.Pipe(time.Second)
		defer sv.Close()
		cl := &Client{c: c, peer: "pipe"}
		ab := kinds.NewTestAbort()
		w := kinds.WatchServer(c, "pipe", ab)
		go func() {
			var end proto.Ready
			if sv.Recv(proto.MsgReady, &end) == nil && end.Phase == proto.PhaseEnd {
				sv.Send(proto.MsgResult, proto.ServerResult{Iterations: end.Total + int64(len(end.Totals))})
			}
		}()
		sr, err := cl.finishTest(w, ab, 40, nil, 20, 20)
		if err != nil || sr.Iterations != 42 {
			t.Fatalf("finishTest = %+v, %v; want the result of the end's total and 2 per-QP totals", sr, err)
		}
	})
	t.Run("loop failed", func(t *testing.T) {
		c, sv := ctrl.Pipe(time.Second)
		defer sv.Close()
		cl := &Client{c: c, peer: "pipe"}
		ab := kinds.NewTestAbort()
		w := kinds.WatchServer(c, "pipe", ab)
		got := make(chan error, 1)
		go func() {
			var end proto.Ready
			err := sv.Recv(proto.MsgReady, &end) // the client's error
			sv.SendError(errors.New("test aborted by the client"))
			got <- err
		}()
		_, err := cl.finishTest(w, ab, 0, errors.New("engine: IBV_WC_RETRY_EXC_ERR"))
		if err == nil || !strings.Contains(err.Error(), "RETRY_EXC") {
			t.Fatalf("finishTest = %v, want the loop's error", err)
		}
		var re *proto.RemoteError
		if e := <-got; !errors.As(e, &re) || !strings.Contains(re.Msg, "RETRY_EXC") {
			t.Fatalf("the server got %v, want the client's error", e)
		}
		select {
		case <-w.Done(): // the server's answer ended the watch: in step
		case <-time.After(2 * time.Second):
			t.Fatal("the watch still runs after the server's answer")
		}
	})
}
