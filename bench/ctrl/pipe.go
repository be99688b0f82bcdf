package ctrl

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// pipeDepth is how many messages one direction of a Pipe holds unread, as
// a TCP connection's buffers would: a send beyond it waits for the peer
// (within the deadline).
const pipeDepth = 1024

// Pipe returns an in-memory pair of connected Chans: what one end sends,
// the other receives, in order, JSON-encoded as on the wire but without
// frames or sockets. Each end's default per-message deadline is timeout.
// Closing either end ends the pair: the closed end's calls return
// net.ErrClosed, the peer's receives io.EOF once it read what was sent
// before, its sends io.ErrClosedPipe.
//
// The client end's LocalAddr is 127.0.0.1:2 and its RemoteAddr
// 127.0.0.1:1, the server end's the other way round.
func Pipe(timeout time.Duration) (client, server Chan) {
	done := &pipeDone{client: make(chan struct{}), server: make(chan struct{})}
	c2s, s2c := make(chan message, pipeDepth), make(chan message, pipeDepth)
	cAddr := net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:2"))
	sAddr := net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:1"))
	cl := &pipeEnd{in: s2c, out: c2s, closed: done.client, peerClosed: done.server, done: done, local: cAddr, remote: sAddr, timeout: timeout}
	sv := &pipeEnd{in: c2s, out: s2c, closed: done.server, peerClosed: done.client, done: done, local: sAddr, remote: cAddr, timeout: timeout}
	return cl, sv
}

// message is one message in a Pipe.
type message struct {
	t       proto.MsgType
	payload []byte
}

// pipeDone holds both ends' closed channels, each closed once.
type pipeDone struct {
	once           [2]sync.Once
	client, server chan struct{}
}

// pipeEnd is one end of a Pipe.
type pipeEnd struct {
	in, out            chan message
	closed, peerClosed chan struct{}
	done               *pipeDone
	local, remote      net.Addr
	timeout            time.Duration
	rmu                sync.Mutex // receives in order, as proto.Conn's
}

func (p *pipeEnd) Timeout() time.Duration { return p.timeout }
func (p *pipeEnd) LocalAddr() net.Addr    { return p.local }
func (p *pipeEnd) RemoteAddr() net.Addr   { return p.remote }

func (p *pipeEnd) Close() error {
	i := 0
	if p.closed == p.done.server {
		i = 1
	}
	p.done.once[i].Do(func() { close(p.closed) })
	return nil
}

// timer is a deadline d from now (d <= 0: none): its channel and stop.
func timer(d time.Duration) (<-chan time.Time, func() bool) {
	if d <= 0 {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(d)
	return t.C, t.Stop
}

func (p *pipeEnd) Send(t proto.MsgType, v any) error {
	var payload []byte
	if v != nil {
		var err error
		if payload, err = json.Marshal(v); err != nil {
			return &proto.Error{Op: "encode " + t.String(), Err: err}
		}
	}
	return p.send(message{t, payload})
}

func (p *pipeEnd) send(m message) error {
	op := "sending " + m.t.String() + " to " + p.remote.String()
	select { // closed first: a closed end sends nothing, even with room
	case <-p.closed:
		return &proto.Error{Op: op, Err: net.ErrClosed}
	case <-p.peerClosed:
		return &proto.Error{Op: op, Err: io.ErrClosedPipe}
	default:
	}
	expired, stop := timer(p.timeout)
	defer stop()
	select {
	case p.out <- m:
		return nil
	case <-p.closed:
		return &proto.Error{Op: op, Err: net.ErrClosed}
	case <-p.peerClosed:
		return &proto.Error{Op: op, Err: io.ErrClosedPipe}
	case <-expired:
		return &proto.Error{Op: op, Err: os.ErrDeadlineExceeded}
	}
}

func (p *pipeEnd) SendError(err error) error {
	re := proto.ErrorPayload(err)
	return p.Send(proto.MsgError, &re)
}

func (p *pipeEnd) Recv(want proto.MsgType, v any) error {
	return p.RecvTimeout(want, v, p.timeout)
}

func (p *pipeEnd) RecvTimeout(want proto.MsgType, v any, d time.Duration) error {
	t, payload, err := p.recv(want.String(), d)
	if err != nil {
		return err
	}
	if t != want {
		return &proto.Error{Op: "waiting for " + want.String() + " from " + p.remote.String(),
			Err: fmt.Errorf("%w: expected %v, got %v", proto.ErrUnexpectedType, want, t)}
	}
	return p.Decode(t, payload, v)
}

func (p *pipeEnd) RecvAny(d time.Duration) (proto.MsgType, []byte, error) {
	return p.recv("message", d)
}

// errPeerClosed is a receive's error once the peer closed and every
// message it sent before was read; it wraps io.EOF as proto.Conn's does.
var errPeerClosed = fmt.Errorf("connection closed by peer: %w", io.EOF)

func (p *pipeEnd) recv(what string, d time.Duration) (proto.MsgType, []byte, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	op := "waiting for " + what + " from " + p.remote.String()
	select {
	case <-p.closed:
		return 0, nil, &proto.Error{Op: op, Err: net.ErrClosed}
	default:
	}
	expired, stop := timer(d)
	defer stop()
	var m message
	select {
	case m = <-p.in:
	case <-p.closed:
		return 0, nil, &proto.Error{Op: op, Err: net.ErrClosed}
	case <-p.peerClosed:
		select { // what the peer sent before it closed comes first
		case m = <-p.in:
		default:
			return 0, nil, &proto.Error{Op: op, Err: errPeerClosed}
		}
	case <-expired:
		return 0, nil, &proto.Error{Op: op, Err: os.ErrDeadlineExceeded}
	}
	if m.t == proto.MsgError {
		var re proto.RemoteError
		if err := json.Unmarshal(m.payload, &re); err != nil {
			return 0, nil, &proto.Error{Op: "decode error from " + p.remote.String(), Err: err}
		}
		return proto.MsgError, nil, &re
	}
	return m.t, m.payload, nil
}

// decoder decodes payloads as proto.Conn.Decode does (a zero Conn: only
// its peer's name, for errors, is missing).
var decoder proto.Conn

func (p *pipeEnd) Decode(t proto.MsgType, payload []byte, v any) error {
	return decoder.Decode(t, payload, v)
}
