package dropin

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// The drop-in server's listeners (server): perftest's server takes one
// client and exits; the drop-in's server looks at that
// client's first bytes before it knows which protocol to speak.

// oneSession is a listener that accepts one connection, stops listening,
// and reports net.ErrClosed once that connection is closed (the session
// over), so that bench/server's Server.Serve returns after exactly one session.
type oneSession struct {
	net.Listener
	mu       sync.Mutex
	accepted bool
	done     chan struct{} // closed when the session's connection closes
	closed   chan struct{} // closed by Close
	once     sync.Once
}

// newOneSession returns the listener on ln.
func newOneSession(ln net.Listener) *oneSession {
	return &oneSession{Listener: ln, done: make(chan struct{}), closed: make(chan struct{})}
}

// Accept returns the first connection, then blocks until it or l is closed.
func (l *oneSession) Accept() (net.Conn, error) {
	l.mu.Lock()
	first := !l.accepted
	l.accepted = true
	l.mu.Unlock()
	if first {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.Listener.Close() // like perftest's server: nobody else connects
		return &sessionConn{Conn: c, done: l.done}, nil
	}
	select {
	case <-l.done:
	case <-l.closed:
	}
	return nil, net.ErrClosed
}

// Close closes the listener and ends a blocked Accept.
func (l *oneSession) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// sessionConn closes done when it is closed.
type sessionConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *sessionConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

// oneConn is a listener that yields one connection already accepted
// (acceptPeek's), then blocks until closed.
type oneConn struct {
	c      net.Conn
	addr   net.Addr
	mu     sync.Mutex
	given  bool
	closed chan struct{}
	once   sync.Once
}

// newOneConn returns a listener for c; addr is what Addr reports.
func newOneConn(c net.Conn, addr net.Addr) *oneConn {
	return &oneConn{c: c, addr: addr, closed: make(chan struct{})}
}

// Accept returns the connection once, then net.ErrClosed after Close.
func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	first := !l.given
	l.given = true
	l.mu.Unlock()
	if first {
		return l.c, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}

// Close ends a blocked Accept; the connection is the caller's.
func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the address given to newOneConn.
func (l *oneConn) Addr() net.Addr { return l.addr }

// peekedConn replays the bytes acceptPeek read.
type peekedConn struct {
	net.Conn
	r io.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// acceptPeek accepts one connection on ln (ctx's end closes ln) and reads
// up to n of its first bytes, within timeout; the connection it returns
// reads them again. A client that sends fewer (or closes) gets them
// back short: the protocol that then reads reports it.
func acceptPeek(ctx context.Context, ln net.Listener, n int, timeout time.Duration) (net.Conn, []byte, error) {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	c, err := ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		return nil, nil, err
	}
	b := make([]byte, n)
	c.SetReadDeadline(time.Now().Add(timeout))
	got, _ := io.ReadFull(c, b)
	c.SetReadDeadline(time.Time{})
	return &peekedConn{Conn: c, r: io.MultiReader(bytes.NewReader(b[:got]), c)}, b[:got], nil
}
