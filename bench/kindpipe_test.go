package bench

import (
	"context"
	"errors"
	"io"
	"log"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// pipeServer runs the server's half of one TCP test on sv (its session's
// steps from the test message on: kinds.AcceptTCP, kinds.Serve) and returns its
// error on the channel.
func pipeServer(sv ctrl.Chan) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			var sp spec.Spec
			if err := sv.Recv(proto.MsgTest, &sp); err != nil {
				return err
			}
			d, err := kinds.AcceptTCP(sv, sp)
			if err != nil {
				return err
			}
			defer d.Close()
			return kinds.Serve(&kinds.ServerTest{C: sv, Spec: sp, TCP: d, Log: log.New(io.Discard, "", 0)})
		}()
	}()
	return done
}

// TestTCPKindOverPipe: the TCP baseline's halves and the shared lifecycle
// (connect, ready, heartbeats, end, result) with the control channel in
// memory: a latency and a bandwidth test in step, then a server lost in
// the middle of a test and a client lost in the middle of one.
func TestTCPKindOverPipe(t *testing.T) {
	specs := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{64},
		Template: spec.Spec{Iters: 300, Warmup: -1}})
	for _, sp := range specs {
		t.Run(sp.Name(), func(t *testing.T) {
			c, sv := ctrl.Pipe(ctrl.MsgTimeout)
			defer sv.Close()
			cl := &Client{c: c, peer: "pipe"}
			served := pipeServer(sv)
			res, err := cl.Run(context.Background(), sp, measure.Options{CPU: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-served; err != nil {
				t.Fatalf("server: %v", err)
			}
			if res.Iterations != sp.Iters || res.Transport != result.TransportTCP || !reflect.DeepEqual(res.TimedInterval, kinds.TCPTimedInterval(sp)) {
				t.Errorf("%d iterations (want %d), transport %q", res.Iterations, sp.Iters, res.Transport)
			}
		})
	}
	long := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Template: spec.Spec{Duration: 30 * time.Second}})[0]
	t.Run("server lost", func(t *testing.T) {
		c, sv := ctrl.Pipe(ctrl.MsgTimeout)
		running := &onStart{Chan: c}
		running.f = func() { time.AfterFunc(100*time.Millisecond, func() { sv.Close() }) }
		cl := &Client{c: running, peer: "pipe"}
		served := pipeServer(sv)
		start := time.Now()
		_, err := cl.Run(context.Background(), long, measure.Options{CPU: -1})
		var pl *kinds.PeerLostError
		if !errors.As(err, &pl) || time.Since(start) > 5*time.Second {
			t.Fatalf("client: %v after %v, want the server lost at once", err, time.Since(start))
		}
		<-served
	})
	t.Run("client lost", func(t *testing.T) {
		c, sv := ctrl.Pipe(ctrl.MsgTimeout)
		defer sv.Close()
		// closed once the server has said the test starts (not after a fixed
		// time: a slow setup would still have the server waiting for ready)
		running := &onStart{Chan: c}
		running.f = func() { time.AfterFunc(100*time.Millisecond, func() { c.Close() }) }
		cl := &Client{c: running, peer: "pipe"}
		served := pipeServer(sv)
		if _, err := cl.Run(context.Background(), long, measure.Options{CPU: -1}); err == nil {
			t.Fatal("client: the test went on after its control channel closed")
		}
		select {
		case err := <-served:
			if err == nil || !strings.Contains(err.Error(), "client lost during the test") {
				t.Fatalf("server: %v, want the client lost", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("server: still serving 5s after the client's control channel closed")
		}
	})
}

// onStart calls f once, when the channel receives the peer's ready that
// starts a test (proto.PhaseStart).
type onStart struct {
	ctrl.Chan
	once sync.Once
	f    func()
}

func (o *onStart) seen(t proto.MsgType, v any, err error) {
	if r, ok := v.(*proto.Ready); ok && err == nil && t == proto.MsgReady && r.Phase == proto.PhaseStart {
		o.once.Do(o.f)
	}
}

func (o *onStart) Recv(t proto.MsgType, v any) error {
	err := o.Chan.Recv(t, v)
	o.seen(t, v, err)
	return err
}

func (o *onStart) RecvTimeout(t proto.MsgType, v any, d time.Duration) error {
	err := o.Chan.RecvTimeout(t, v, d)
	o.seen(t, v, err)
	return err
}

func (o *onStart) Decode(t proto.MsgType, payload []byte, v any) error {
	err := o.Chan.Decode(t, payload, v)
	o.seen(t, v, err)
	return err
}
