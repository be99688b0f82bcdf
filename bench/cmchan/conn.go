// Package cmchan is a message channel over one RC QP that rdma_cm
// connected: each Write one SEND, each Read (part of) one received
// message, every wait bounded by a deadline. perftest's -R runs its whole
// out-of-band exchange over such a channel (docs/perftest.md, "Facing
// perftest"); peer.DialPerftestCM and peer.AcceptPerftestCM use it.
package cmchan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/verbs"
)

// MaxMsg bounds one message (perftest's receive buffer holds
// sizeof(struct pingpong_dest); the channel receives up to MaxMsg).
const MaxMsg = 4096

// ErrRefused: nobody listens with rdma_cm at the address (the request was
// rejected or unreachable).
var ErrRefused = errors.New("no rdma_cm listener")

// OpenFunc opens the device an id is bound to (its DeviceName and Port)
// and returns its librdmacm context (verbs.OpenCM), which the caller keeps
// open until the channel is closed.
type OpenFunc func(id *verbs.CMID) (*verbs.Context, error)

// Conn is the channel: a net.Conn whose deadlines bound every wait, and
// whose Close ends a wait at once from another goroutine.
type Conn struct {
	client bool
	port   uint16         // the rdma_cm port
	peer   netip.AddrPort // the server's address (client side)
	ch     *verbs.EventChannel
	id     *verbs.CMID
	pd     *verbs.PD
	scq    *verbs.CQ
	rcq    *verbs.CQ
	qp     *verbs.QP
	buf    *verbs.Buffer
	mr     *verbs.MR

	mu       sync.Mutex // held by Read, Write and the release in Close
	closed   atomic.Bool
	rdl, wdl time.Time
	pending  []byte // what is left of the last message
	released bool
}

// Dial connects a channel to a listener at server within timeout (ctx's
// deadline, if sooner). A rejected or unreachable request gives an error
// wrapping ErrRefused.
func Dial(ctx context.Context, server netip.AddrPort, open OpenFunc, timeout time.Duration) (_ *Conn, err error) {
	c := &Conn{client: true, port: server.Port(), peer: server}
	defer func() {
		if err != nil {
			c.release()
		}
	}()
	if c.ch, err = verbs.NewEventChannel(); err != nil {
		return nil, err
	}
	if c.id, err = c.ch.CreateID(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.id.Resolve(netip.Addr{}, server, min(timeout, 5*time.Second)); err != nil {
		return nil, fmt.Errorf("rdma_cm to %s: %w", server, err)
	}
	if err := c.open(c.id, open); err != nil {
		return nil, err
	}
	if err := c.id.Connect(verbs.ConnParam{RetryCount: 7, RNRRetryCount: 7}, deadline); err != nil {
		var ee *verbs.EventError
		if errors.As(err, &ee) && (ee.Got == verbs.CMEventRejected || ee.Got == verbs.CMEventUnreachable) {
			return nil, fmt.Errorf("%w at %s (%v)", ErrRefused, server, err)
		}
		return nil, fmt.Errorf("rdma_cm connect to %s: %w", server, err)
	}
	return c, nil
}

// Listener listens with rdma_cm on a port, any address.
type Listener struct {
	port uint16
	ch   *verbs.EventChannel
	id   *verbs.CMID
}

// Listen listens with rdma_cm on port (any address).
func Listen(port int) (_ *Listener, err error) {
	l := &Listener{port: uint16(port)}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if l.ch, err = verbs.NewEventChannel(); err != nil {
		return nil, err
	}
	if l.id, err = l.ch.CreateID(); err != nil {
		return nil, err
	}
	if err := l.id.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(port))); err != nil {
		return nil, fmt.Errorf("rdma_cm bind to port %d: %w", port, err)
	}
	if err := l.id.Listen(1); err != nil {
		return nil, fmt.Errorf("rdma_cm listen on port %d: %w", port, err)
	}
	return l, nil
}

// Close stops listening (an accepted channel keeps the event channel).
func (l *Listener) Close() error {
	var errs []error
	if l.id != nil {
		errs = append(errs, l.id.Close())
		l.id = nil
	}
	if l.ch != nil {
		errs = append(errs, l.ch.Close())
		l.ch = nil
	}
	return errors.Join(errs...)
}

// Accept takes the first connection request (later ones are rejected),
// opens its device, accepts and waits for the connection, the wait after
// the request bounded by timeout; then it stops listening, so that the
// port is free again (as perftest's server does). The listener is done
// either way.
func (l *Listener) Accept(ctx context.Context, open OpenFunc, timeout time.Duration) (_ *Conn, err error) {
	abort := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(abort) })
	defer stop()
	var ev verbs.CMEvent
	for {
		if ev, err = l.ch.Next(time.Now().Add(time.Hour), abort); err != nil {
			if errors.Is(err, verbs.ErrAborted) {
				return nil, context.Cause(ctx)
			}
			if errors.Is(err, verbs.ErrTimeout) {
				continue
			}
			return nil, err
		}
		if ev.Type == verbs.CMEventConnectRequest {
			break
		}
	}
	c := &Conn{port: l.port, id: ev.ID} // l's event channel too, once accepted
	defer func() {
		if err != nil {
			ev.ID.Reject()
			c.release()
		}
	}()
	if err := c.open(ev.ID, open); err != nil {
		return nil, err
	}
	if err := ev.ID.Accept(verbs.ConnParam{RetryCount: 7, RNRRetryCount: 7}); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		e, err := l.ch.Next(deadline, abort)
		if err != nil {
			return nil, fmt.Errorf("rdma_cm accept: %w", err)
		}
		if e.ID != ev.ID {
			if e.Type == verbs.CMEventConnectRequest {
				e.ID.Reject()
				e.ID.Close()
			}
			continue
		}
		if e.Type != verbs.CMEventEstablished {
			return nil, fmt.Errorf("rdma_cm accept: %s (status %d)", e.Type, e.Status)
		}
		break
	}
	c.ch = l.ch
	l.id.Close() // its connection requests are over
	l.id, l.ch = nil, nil
	return c, nil
}

// open opens the id's device, creates the channel's QP on it and posts
// its first receive.
func (c *Conn) open(id *verbs.CMID, open OpenFunc) error {
	ctx, err := open(id)
	if err != nil {
		return err
	}
	if c.pd, err = ctx.AllocPD(); err != nil {
		return err
	}
	if c.scq, err = ctx.CreateCQ(4, false); err != nil {
		return err
	}
	if c.rcq, err = ctx.CreateCQ(4, false); err != nil {
		return err
	}
	if c.buf, err = verbs.AllocBuffer(2*MaxMsg, false); err != nil {
		return err
	}
	if c.mr, err = c.pd.RegisterMR(c.buf, 0, 2*MaxMsg, verbs.AccessLocalWrite); err != nil {
		return err
	}
	if c.qp, err = id.CreateQP(c.pd, verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: c.scq, RecvCQ: c.rcq,
		Caps: verbs.QPCaps{MaxSendWR: 2, MaxRecvWR: 2}}); err != nil {
		return err
	}
	return c.qp.PostRecv(1, c.mr, 0, MaxMsg)
}

// wait polls cq until a completion, the deadline (os.ErrDeadlineExceeded)
// or Close (net.ErrClosed), sleeping between polls (a control channel: it
// leaves the CPU to the timed loops).
func (c *Conn) wait(cq *verbs.CQ, deadline time.Time) (verbs.WC, error) {
	sleep := 20 * time.Microsecond
	for {
		if c.closed.Load() {
			return verbs.WC{}, net.ErrClosed
		}
		w, ok, err := cq.PollOne()
		if err != nil {
			return w, err
		}
		if ok {
			return w, w.Err()
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return w, os.ErrDeadlineExceeded
		}
		time.Sleep(sleep)
		sleep = min(2*sleep, time.Millisecond)
	}
}

// Read returns the next message's bytes (what is left of it when p was
// shorter). A message shorter than p is an error: each step of perftest's
// exchange is one message of the step's size.
func (c *Conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return 0, net.ErrClosed
	}
	if len(c.pending) == 0 {
		w, err := c.wait(c.rcq, c.rdl)
		if err != nil {
			return 0, err
		}
		n := int(min(w.ByteLen, MaxMsg))
		c.pending = append(c.pending[:0], c.buf.Bytes()[:n]...)
		if err := c.qp.PostRecv(1, c.mr, 0, MaxMsg); err != nil {
			return 0, err
		}
		if n < len(p) {
			c.pending = c.pending[:0]
			return 0, fmt.Errorf("rdma_cm channel: a message of %d bytes, want %d", n, len(p))
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// Write sends b as one message and waits for its completion.
func (c *Conn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return 0, net.ErrClosed
	}
	if len(b) > MaxMsg {
		return 0, fmt.Errorf("rdma_cm channel: a message of %d bytes, at most %d", len(b), MaxMsg)
	}
	copy(c.buf.Bytes()[MaxMsg:], b)
	if err := c.qp.PostSend(verbs.SendWR{WRID: 2, Op: verbs.OpSend, MR: c.mr, Offset: MaxMsg, Len: len(b), Signaled: true}); err != nil {
		return 0, err
	}
	if _, err := c.wait(c.scq, c.wdl); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close ends a wait in progress and releases the channel (not the
// device OpenFunc opened).
func (c *Conn) Close() error {
	c.closed.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.release()
}

// release frees everything (under mu, or before the channel is shared).
func (c *Conn) release() error {
	if c.released {
		return nil
	}
	c.released = true
	var errs []error
	for _, x := range []interface{ Close() error }{c.qp, c.id, c.mr, c.buf, c.scq, c.rcq, c.pd, c.ch} {
		errs = append(errs, x.Close()) // each is nil-safe
	}
	return errors.Join(errs...)
}

// Port is the rdma_cm port of the channel.
func (c *Conn) Port() uint16 { return c.port }

// Client reports whether this side dialled.
func (c *Conn) Client() bool { return c.client }

// Peer is the server's address (client side; else invalid).
func (c *Conn) Peer() netip.AddrPort { return c.peer }

// Addr is an rdma_cm address as a net.Addr.
type Addr struct{ netip.AddrPort }

// Network is "rdma_cm".
func (a Addr) Network() string { return "rdma_cm" }

// LocalAddr is the rdma_cm port (the address is not tracked).
func (c *Conn) LocalAddr() net.Addr {
	return Addr{netip.AddrPortFrom(netip.IPv4Unspecified(), c.port)}
}

// RemoteAddr is the server's address (client), else the port it listened on.
func (c *Conn) RemoteAddr() net.Addr {
	if c.client {
		return Addr{c.peer}
	}
	return Addr{netip.AddrPortFrom(netip.IPv4Unspecified(), c.port)} // the port it listened on
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds the next reads' waits (the zero time: none).
func (c *Conn) SetReadDeadline(t time.Time) error { c.rdl = t; return nil }

// SetWriteDeadline bounds the next writes' waits.
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wdl = t; return nil }
