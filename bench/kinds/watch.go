package kinds

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

// Every wait of a running test ends. While a test runs, each side sends
// Ready{alive} every ctrl.HeartbeatEvery (heartbeat), and each side reads the
// other's messages with a deadline of ctrl.HeartbeatTimeout per message: the
// server in awaitEnd and readBidirClient, the client in one Watch per
// test, from the server's start to its result. Whatever ends a test early
// (the control connection closing, the server's heartbeat stopping, the
// server's error, a fatal asynchronous event of the device, a cancelled
// context) goes through one TestAbort, which aborts the test's C loops at
// once and remembers why: the test's error is that cause, not the loops'
// "aborted".

// PeerLostError is a server lost in the middle of a test: its control
// connection closed or its heartbeat stopped. The CLI exits with the peer
// code (4).
type PeerLostError struct {
	Peer   string
	Reason string // "control connection closed", "no heartbeat from the server for 6s"
	Err    error  // the control connection's error
}

func (e *PeerLostError) Error() string {
	return fmt.Sprintf("server %s lost: %s (%v)", e.Peer, e.Reason, e.Err)
}

func (e *PeerLostError) Unwrap() error { return e.Err }

// lostError turns a control connection error read during a test into a
// *PeerLostError; a server's own error (*proto.RemoteError) stays as is.
func lostError(peer string, err error) error {
	var re *proto.RemoteError
	if errors.As(err, &re) {
		return err
	}
	reason := "control connection closed"
	if errors.Is(err, os.ErrDeadlineExceeded) {
		reason = fmt.Sprintf("no heartbeat from the server for %v", ctrl.HeartbeatTimeout)
	}
	return &PeerLostError{Peer: peer, Reason: reason, Err: err}
}

// StoodStill is how far past its deadline the watch's wait for the
// server's next message must end for the client to say that it stood
// still itself: a timer of a running process fires within milliseconds of
// its deadline; one that fires seconds late was not run (its host froze,
// a VM's host descheduled it, or it starved), and the server's heartbeats
// sent meanwhile may be waiting unread.
var StoodStill = time.Second

// Heartbeat sends Ready{alive} on c every ctrl.HeartbeatEvery until the
// returned stop is called (idempotent; it returns once no heartbeat can
// follow): the peer tells a slow test from a dead or stopped side.
func Heartbeat(c ctrl.Chan) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ctrl.HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseAlive}) != nil {
					return
				}
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(quit)
		<-done
	})
}

// LostGrace is how long a test whose own loop failed waits for the reason
// (Watch.CauseWithin): a lost server or a fatal async event.
const LostGrace = 500 * time.Millisecond

// Loop is a C loop that can be stopped from another goroutine
// (verbs.Engine, sockeng.Engine).
type Loop interface{ Abort() }

// TestAbort aborts one test's loops with a cause. The first cause wins,
// except that a fatal event of this side's own device replaces a server's
// error (the server usually saw the same event and said so a moment
// later). After disarm it does nothing: the loops may be freed.
type TestAbort struct {
	mu     sync.Mutex
	loops  []Loop
	cause  error
	off    bool
	caused chan struct{} // closed with the first cause
}

// NewTestAbort is the abort of a test whose C loops are loops.
func NewTestAbort(loops ...Loop) *TestAbort {
	return &TestAbort{loops: loops, caused: make(chan struct{})}
}

// Abort records cause (when it is the first, see TestAbort) and aborts the loops.
func (a *TestAbort) Abort(cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.off {
		return
	}
	var re *proto.RemoteError
	var ae *verbs.AsyncEventError
	if a.cause == nil {
		close(a.caused)
	}
	if a.cause == nil || (errors.As(a.cause, &re) && errors.As(cause, &ae)) {
		a.cause = cause
	}
	for _, l := range a.loops {
		l.Abort()
	}
}

// Err is the recorded cause, or err when there is none.
func (a *TestAbort) Err(err error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cause != nil {
		return a.cause
	}
	return err
}

// Disarm ends the aborts: call it before the loops are freed.
func (a *TestAbort) Disarm() {
	a.mu.Lock()
	a.off = true
	a.mu.Unlock()
}

// watchMsg is one message of the server during a test (not a heartbeat),
// or the error that ended the watch.
type watchMsg struct {
	t       proto.MsgType
	payload []byte
	err     error
}

// Watch is the client's one reader of the control connection while a
// test runs, from the server's start to its result: it takes the server's
// heartbeats, passes its other messages on (Next), and aborts the test
// when the connection closes, no message came for ctrl.HeartbeatTimeout, or the
// server sent its error.
type Watch struct {
	c    ctrl.Chan
	peer string // the server's address, for errors
	ab   *TestAbort
	msgs chan watchMsg
	done chan struct{}
	end  error // why the watch ended, once done is closed (nil: the result came)
}

// WatchServer starts watching c, the control channel to the server at
// peer; the test's loops abort through ab.
func WatchServer(c ctrl.Chan, peer string, ab *TestAbort) *Watch {
	w := &Watch{c: c, peer: peer, ab: ab, msgs: make(chan watchMsg, 4), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *Watch) run() {
	defer close(w.done)
	// the latest wait that ended StoodStill or more past its deadline, and
	// when: a wait that spanned a freeze may still return a heartbeat that
	// was buffered meanwhile, and the loss shows a wait or two later
	var still time.Duration
	var stillAt time.Time
	for {
		start := time.Now()
		t, payload, err := w.c.RecvAny(ctrl.HeartbeatTimeout)
		if late := time.Since(start) - ctrl.HeartbeatTimeout; late >= StoodStill {
			still, stillAt = late, time.Now()
		}
		if err != nil {
			err = lostError(w.peer, err)
			var pl *PeerLostError
			if still > 0 && time.Since(stillAt) <= 2*ctrl.HeartbeatTimeout && errors.As(err, &pl) {
				why := "and the server's heartbeats may have been on their way"
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					why = "and the server, missing this side's heartbeats as long, may have dropped it"
				}
				pl.Reason += fmt.Sprintf("; this side's own wait ended %v past its deadline: this host stood still (frozen or starved), %s",
					still.Round(time.Millisecond), why)
			}
			w.end = err
			w.ab.Abort(err)
			w.msgs <- watchMsg{err: err}
			return
		}
		if t == proto.MsgReady {
			var r proto.Ready
			if err := w.c.Decode(t, payload, &r); err == nil && r.Phase == proto.PhaseAlive {
				continue
			}
		}
		w.msgs <- watchMsg{t: t, payload: payload}
		if t == proto.MsgResult {
			return
		}
	}
}

// Done is closed when the watch ended: the server's result came, or
// the cause that ended the test.
func (w *Watch) Done() <-chan struct{} { return w.done }

// Next waits up to d for the server's next message, which must be of type
// want, and decodes it into v.
func (w *Watch) Next(want proto.MsgType, v any, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case m := <-w.msgs:
		if m.err != nil {
			return m.err
		}
		if m.t != want {
			return &proto.Error{Op: "waiting for " + want.String() + " from " + w.peer,
				Err: fmt.Errorf("%w: expected %v, got %v", proto.ErrUnexpectedType, want, m.t)}
		}
		return w.c.Decode(m.t, m.payload, v)
	case <-t.C:
		return &proto.Error{Op: "waiting for " + want.String() + " from " + w.peer, Err: fmt.Errorf("none within %v", d)}
	}
}

// CauseWithin waits up to d for a reason why a test whose own loop failed
// (err) did: the server lost (the watch ends with a *PeerLostError) or a
// cause recorded by ab (a fatal async event, say). The data path of a dead
// server or a downed port fails at about the time the control connection
// closes or the event arrives; the test reports the reason, not the
// symptom. It returns the reason, naming err too, or nil.
func (w *Watch) CauseWithin(ab *TestAbort, err error, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.done:
		var pl *PeerLostError
		if errors.As(w.end, &pl) {
			return fmt.Errorf("%w (the test's loop: %v)", w.end, err)
		}
	case <-ab.caused:
		if c := ab.Err(nil); !errors.Is(c, context.Canceled) && !errors.Is(c, context.DeadlineExceeded) {
			return fmt.Errorf("%w (the test's loop: %v)", c, err)
		}
		return ab.Err(nil)
	case <-t.C:
	}
	return nil
}

// Wait waits up to d for the watch to end: after the client's error, the
// server's answer ends it, and the session stays in step.
func (w *Watch) Wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
}
