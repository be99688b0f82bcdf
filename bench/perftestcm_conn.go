package bench

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

// PerftestCMConn is perftest's -R exchange channel (perftestcm.go): one
// RC QP that rdma_cm connected, each Write one SEND, each Read (part of)
// one received message. It is a net.Conn for wire.Conn: the deadlines
// bound every wait (no wait without one), Close ends a wait at once from
// another goroutine. It owns the device the test then runs on (Device).
type PerftestCMConn struct {
	client bool
	port   uint16         // the rdma_cm port (-p)
	peer   netip.AddrPort // the server's address (client side)
	dev    *Device
	ch     *verbs.EventChannel
	id     *verbs.CMID
	pd     *verbs.PD
	scq    *verbs.CQ
	rcq    *verbs.CQ
	qp     *verbs.QP
	buf    *verbs.Buffer
	mr     *verbs.MR

	mu        sync.Mutex // held by Read, Write and the release in Close
	closed    atomic.Bool
	rdl, wdl  time.Time
	pending   []byte // what is left of the last message
	released  bool
	ownDevice bool
}

// perftestCMMsg bounds one message of the channel: perftest's receive
// buffer is sizeof(struct pingpong_dest); the drop-in receives up to this.
const perftestCMMsg = 4096

// Device is the device rdma_cm bound the channel to; the test's QPs run
// on it. It stays open until Close.
func (c *PerftestCMConn) Device() *Device { return c.dev }

// DialPerftestCM connects the channel to a perftest -R server at
// host:port within timeout. A server that rejects the request (nobody
// listens with rdma_cm there: not a perftest -R server, or not yet) gives
// an error wrapping ErrNotPerftest.
func DialPerftestCM(ctx context.Context, server netip.AddrPort, device string, gidIndex int, timeout time.Duration) (_ *PerftestCMConn, err error) {
	if server.Addr().Unmap().IsLoopback() {
		return nil, errLoopbackCM(server.Addr())
	}
	c := &PerftestCMConn{client: true, port: server.Port(), peer: server}
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
	if err := c.id.Resolve(netip.Addr{}, server, min(timeout, cmTimeout)); err != nil {
		return nil, fmt.Errorf("-R: rdma_cm to %s: %w", server, err)
	}
	if err := c.open(c.id, device, gidIndex); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.id.Connect(verbs.ConnParam{RetryCount: 7, RNRRetryCount: 7}, deadline); err != nil {
		var ee *verbs.EventError
		if errors.As(err, &ee) && (ee.Got == verbs.CMEventRejected || ee.Got == verbs.CMEventUnreachable) {
			return nil, fmt.Errorf("%w: no rdma_cm listener at %s (%v)", ErrNotPerftest, server, err)
		}
		return nil, fmt.Errorf("-R: rdma_cm connect to %s: %w", server, err)
	}
	return c, nil
}

// PerftestCMListener is a drop-in server's rdma_cm listener for perftest
// -R clients.
type PerftestCMListener struct {
	port uint16
	ch   *verbs.EventChannel
	id   *verbs.CMID
}

// ListenPerftestCM listens with rdma_cm on port (any address), as a
// perftest -R server does.
func ListenPerftestCM(port int) (_ *PerftestCMListener, err error) {
	l := &PerftestCMListener{port: uint16(port)}
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
		return nil, fmt.Errorf("-R: rdma_cm bind to port %d: %w", port, err)
	}
	if err := l.id.Listen(1); err != nil {
		return nil, fmt.Errorf("-R: rdma_cm listen on port %d: %w", port, err)
	}
	return l, nil
}

// Close stops listening (an accepted channel keeps the event channel).
func (l *PerftestCMListener) Close() error {
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
// opens its device (device, when set, must be it), accepts and waits for
// the connection, the wait after the request bounded by timeout; then it
// stops listening, as perftest's server does, so that the port is free
// for the test's QPs. The listener is done either way.
func (l *PerftestCMListener) Accept(ctx context.Context, device string, gidIndex int, timeout time.Duration) (_ *PerftestCMConn, err error) {
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
	c := &PerftestCMConn{port: l.port, id: ev.ID} // l's event channel too, once accepted
	defer func() {
		if err != nil {
			ev.ID.Reject()
			c.release()
		}
	}()
	if err := c.open(ev.ID, device, gidIndex); err != nil {
		return nil, err
	}
	if err := ev.ID.Accept(verbs.ConnParam{RetryCount: 7, RNRRetryCount: 7}); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		e, err := l.ch.Next(deadline, abort)
		if err != nil {
			return nil, fmt.Errorf("-R: rdma_cm accept: %w", err)
		}
		if e.ID != ev.ID {
			if e.Type == verbs.CMEventConnectRequest {
				e.ID.Reject()
				e.ID.Close()
			}
			continue
		}
		if e.Type != verbs.CMEventEstablished {
			return nil, fmt.Errorf("-R: rdma_cm accept: %s (status %d)", e.Type, e.Status)
		}
		break
	}
	// the channel keeps l's event channel; the listening id goes
	c.ch = l.ch
	l.id.Close() // its connection requests are over
	l.id, l.ch = nil, nil
	return c, nil
}

// open opens the id's device, creates the channel's QP on it and posts
// its first receive.
func (c *PerftestCMConn) open(id *verbs.CMID, device string, gidIndex int) error {
	name, port := id.DeviceName(), id.Port()
	if device != "" && device != name {
		return fmt.Errorf("-R: rdma_cm reaches the peer through %s, not -d %s", name, device)
	}
	dev, err := OpenDeviceCM(name, port, gidIndex, netip.Addr{})
	if err != nil {
		return err
	}
	c.dev, c.ownDevice = dev, true
	dev.Reason = "chosen by rdma_cm"
	if c.pd, err = dev.Ctx.AllocPD(); err != nil {
		return err
	}
	if c.scq, err = dev.Ctx.CreateCQ(4, false); err != nil {
		return err
	}
	if c.rcq, err = dev.Ctx.CreateCQ(4, false); err != nil {
		return err
	}
	if c.buf, err = verbs.AllocBuffer(2*perftestCMMsg, false); err != nil {
		return err
	}
	if c.mr, err = c.pd.RegisterMR(c.buf, 0, 2*perftestCMMsg, verbs.AccessLocalWrite); err != nil {
		return err
	}
	if c.qp, err = id.CreateQP(c.pd, verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: c.scq, RecvCQ: c.rcq,
		Caps: verbs.QPCaps{MaxSendWR: 2, MaxRecvWR: 2}}); err != nil {
		return err
	}
	return c.qp.PostRecv(1, c.mr, 0, perftestCMMsg)
}

// wait polls cq until a completion, the deadline (os.ErrDeadlineExceeded)
// or Close (net.ErrClosed), sleeping between polls (a control channel: it
// leaves the CPU to the timed loops).
func (c *PerftestCMConn) wait(cq *verbs.CQ, deadline time.Time) (verbs.WC, error) {
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
func (c *PerftestCMConn) Read(p []byte) (int, error) {
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
		n := int(min(w.ByteLen, perftestCMMsg))
		c.pending = append(c.pending[:0], c.buf.Bytes()[:n]...)
		if err := c.qp.PostRecv(1, c.mr, 0, perftestCMMsg); err != nil {
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
func (c *PerftestCMConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return 0, net.ErrClosed
	}
	if len(b) > perftestCMMsg {
		return 0, fmt.Errorf("rdma_cm channel: a message of %d bytes, at most %d", len(b), perftestCMMsg)
	}
	copy(c.buf.Bytes()[perftestCMMsg:], b)
	if err := c.qp.PostSend(verbs.SendWR{WRID: 2, Op: verbs.OpSend, MR: c.mr, Offset: perftestCMMsg, Len: len(b), Signaled: true}); err != nil {
		return 0, err
	}
	if _, err := c.wait(c.scq, c.wdl); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close ends a wait in progress and releases the channel and its device.
func (c *PerftestCMConn) Close() error {
	c.closed.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.release()
}

// release frees everything (under mu, or before the channel is shared).
func (c *PerftestCMConn) release() error {
	if c.released {
		return nil
	}
	c.released = true
	var errs []error
	for _, x := range []interface{ Close() error }{c.qp, c.id, c.mr, c.buf, c.scq, c.rcq, c.pd, c.ch} {
		errs = append(errs, x.Close()) // each is nil-safe
	}
	if c.ownDevice && c.dev != nil {
		errs = append(errs, c.dev.Close())
	}
	return errors.Join(errs...)
}

// cmAddr is an rdma_cm address as a net.Addr.
type cmAddr struct{ ap netip.AddrPort }

func (a cmAddr) Network() string { return "rdma_cm" }
func (a cmAddr) String() string  { return a.ap.String() }

// LocalAddr is the rdma_cm port (the address is not tracked).
func (c *PerftestCMConn) LocalAddr() net.Addr {
	return cmAddr{netip.AddrPortFrom(netip.IPv4Unspecified(), c.port)}
}

// RemoteAddr is the server's address (client), else unspecified.
func (c *PerftestCMConn) RemoteAddr() net.Addr {
	if c.client {
		return cmAddr{c.peer}
	}
	return cmAddr{netip.AddrPortFrom(netip.IPv4Unspecified(), 0)}
}

// SetDeadline sets both deadlines.
func (c *PerftestCMConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds the next reads' waits (the zero time: none).
func (c *PerftestCMConn) SetReadDeadline(t time.Time) error { c.rdl = t; return nil }

// SetWriteDeadline bounds the next writes' waits.
func (c *PerftestCMConn) SetWriteDeadline(t time.Time) error { c.wdl = t; return nil }
