// Package ctrl is the control channel a test kind talks through: the
// messages of one test between the client and the server (the test, the
// QP info, ready and its phases, heartbeats, the end, the result, the
// verify pass), each wait with a deadline.
//
// Two implementations: *proto.Conn, rdmabench's own frames over the TCP
// control connection, and Pipe, an in-memory pair for tests of a kind's
// sequencing without RDMA and without sockets. perftest's out-of-band
// exchange (bench/perftest/wire), whose steps are records and reports
// rather than messages, is the drop-in's own interface, loopExchange in
// bench/dropin/peer: *wire.Conn, or an in-memory pair in its tests.
package ctrl

import (
	"net"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Chan is one end of a control channel. Its methods mean what they mean
// on *proto.Conn: one goroutine may send while another receives; a
// receive of the peer's MsgError returns its *proto.RemoteError; a passed
// deadline gives an error for which errors.Is(err,
// os.ErrDeadlineExceeded) holds, a peer that closed the channel an error
// wrapping io.EOF, and a call after Close an error wrapping net.ErrClosed.
type Chan interface {
	// Send encodes v (JSON; nil: an empty payload) as one message of
	// type t, within Timeout.
	Send(t proto.MsgType, v any) error
	// SendError sends err as a MsgError (a *proto.RemoteError as is).
	SendError(err error) error
	// Recv is RecvTimeout within Timeout.
	Recv(want proto.MsgType, v any) error
	// RecvTimeout waits up to d (<= 0: no deadline) for one message of
	// type want and decodes it into v.
	RecvTimeout(want proto.MsgType, v any, d time.Duration) error
	// RecvAny waits up to d for one message of any type; decode its
	// payload (the caller's) with Decode.
	RecvAny(d time.Duration) (proto.MsgType, []byte, error)
	// Decode decodes a payload of RecvAny into v, as Recv does.
	Decode(t proto.MsgType, payload []byte, v any) error
	// Timeout is the default per-message deadline; 0: none.
	Timeout() time.Duration
	// LocalAddr and RemoteAddr are the ends' addresses (the control
	// connection's: data listeners and route checks use them).
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
	// Close closes the channel: blocked calls on both ends return. It is
	// idempotent.
	Close() error
}

var _ Chan = (*proto.Conn)(nil)

// Timeouts of the control connection, the same on both sides (tests
// shorten them).
var (
	// MsgTimeout is the deadline of one control message.
	MsgTimeout = 10 * time.Second
	// HeartbeatEvery is how often each side sends Ready{alive} while a
	// test runs.
	HeartbeatEvery = time.Second
	// HeartbeatTimeout is how long a side waits for its peer's next
	// message in a test before it drops the peer (dead, stopped or
	// silent): 4 missed heartbeats.
	HeartbeatTimeout = 4 * time.Second
)
