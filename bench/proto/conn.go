package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Conn is a control connection: framed JSON messages over a net.Conn (TCP in
// production), with a deadline on every read and write.
//
// One goroutine may send while another receives. Concurrent Sends are
// serialized, and so are concurrent receives. After an I/O error inside a
// frame (a partial write, a truncated or malformed frame) the stream has
// lost its framing, and every later call in that direction returns the same
// error; close the Conn. A deadline that passes before the first byte of a
// frame leaves the stream intact, so a receive can be retried.
type Conn struct {
	c       net.Conn
	peer    string       // remote address for error messages
	timeout atomic.Int64 // default per-message deadline, time.Duration

	rmu     sync.Mutex
	rbroken error // sticky receive error once framing is lost
	r       connIO

	wmu     sync.Mutex
	wbroken error // sticky send error once framing is lost
	wbuf    []byte

	closeOnce sync.Once
	closeErr  error
}

// errPeerClosed is what a receive reports when the peer closed the
// connection between frames; it wraps io.EOF.
var errPeerClosed = fmt.Errorf("connection closed by peer: %w", io.EOF)

// NewConn wraps c. timeout is the default deadline for each Send and Recv,
// measured from the start of the call; a non-positive timeout means no
// deadline (not recommended: a silent peer then blocks forever). The Conn
// owns c from now on and closes it in Close.
func NewConn(c net.Conn, timeout time.Duration) *Conn {
	cc := &Conn{c: c, r: connIO{c}}
	if a := c.RemoteAddr(); a != nil {
		cc.peer = a.String()
	}
	cc.timeout.Store(int64(timeout))
	return cc
}

// connIO reads from a net.Conn and strips the *net.OpError layer: the
// Error built around it already names the operation and the peer, so
// a timeout reads "...: i/o timeout" instead of repeating both addresses.
type connIO struct{ c net.Conn }

func (r connIO) Read(p []byte) (int, error) {
	n, err := r.c.Read(p)
	return n, stripOpError(err)
}

func stripOpError(err error) error {
	if oe, ok := err.(*net.OpError); ok && oe.Err != nil {
		return oe.Err
	}
	return err
}

func deadline(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// SetTimeout changes the default per-message deadline used by Send,
// SendError and Recv from the next call on; d <= 0 means no deadline.
func (c *Conn) SetTimeout(d time.Duration) { c.timeout.Store(int64(d)) }

// Timeout is the default per-message deadline (SetTimeout); 0: none.
func (c *Conn) Timeout() time.Duration { return time.Duration(c.timeout.Load()) }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.c.RemoteAddr() }

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.c.LocalAddr() }

// Close closes the underlying connection and returns its error. It is
// idempotent: later calls do nothing and return nil. Blocked Send and Recv calls return an error wrapping
// net.ErrClosed.
func (c *Conn) Close() error {
	first := false
	c.closeOnce.Do(func() { first, c.closeErr = true, c.c.Close() })
	if first {
		return c.closeErr
	}
	return nil
}

// Send encodes v with encoding/json (v == nil sends an empty payload) and
// writes one frame of type t within the Conn's timeout. A payload larger
// than MaxPayload is refused before anything is written.
func (c *Conn) Send(t MsgType, v any) error {
	var payload []byte
	if v != nil {
		var err error
		if payload, err = json.Marshal(v); err != nil {
			return &Error{Op: "encode " + t.String(), Err: err}
		}
	}
	return c.sendPayload(t, payload)
}

// SendError sends err to the peer as a MsgError (ErrorPayload).
func (c *Conn) SendError(err error) error {
	re := ErrorPayload(err)
	return c.Send(MsgError, &re)
}

// ErrorPayload is what SendError sends for err: if err is (or wraps) a
// *RemoteError, that one as is, so a caller can set Code; otherwise
// RemoteError{Msg: err.Error()}. Messages longer than 64 KiB are truncated.
// Every Chan's SendError (bench/ctrl) sends this.
func ErrorPayload(err error) RemoteError {
	var re RemoteError
	var src *RemoteError
	switch {
	case err == nil:
		re.Msg = "unknown error"
	case errors.As(err, &src):
		re = *src
	default:
		re.Msg = err.Error()
	}
	const maxMsg = 64 << 10
	if len(re.Msg) > maxMsg {
		re.Msg = re.Msg[:maxMsg] + "... (truncated)"
	}
	return re
}

func (c *Conn) sendPayload(t MsgType, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	op := "sending " + t.String() + " to " + c.peer
	if c.wbroken != nil {
		return &Error{Op: op, Err: c.wbroken}
	}
	frame, err := AppendFrame(c.wbuf[:0], t, payload)
	if err != nil {
		return err
	}
	if cap(frame) <= payloadChunk { // keep small buffers only
		c.wbuf = frame[:0]
	}
	if err := c.c.SetWriteDeadline(deadline(time.Duration(c.timeout.Load()))); err != nil {
		return &Error{Op: op, Err: stripOpError(err)}
	}
	n, err := c.c.Write(frame)
	if err != nil {
		err = stripOpError(err)
		if n > 0 {
			err = partial(err, n, len(frame))
			c.wbroken = err
		}
		return &Error{Op: op, Err: err}
	}
	return nil
}

// Recv waits up to the Conn's timeout for one frame of type want and
// decodes its JSON payload into v (a pointer), rejecting unknown fields.
// v may be nil only if the payload is empty.
//
// If the peer sent MsgError instead, Recv returns its *RemoteError. A frame
// of another type gives an error wrapping ErrUnexpectedType ("expected
// ready, got result"). A passed deadline gives an error for which
// errors.Is(err, os.ErrDeadlineExceeded) holds ("control: waiting for ready
// from 10.0.0.1:18515: i/o timeout"); a peer that closed the connection
// between frames gives an error wrapping io.EOF.
func (c *Conn) Recv(want MsgType, v any) error {
	return c.RecvTimeout(want, v, time.Duration(c.timeout.Load()))
}

// RecvTimeout is Recv with an explicit deadline d measured from now (for
// example a long test's duration plus slack) instead of the Conn's timeout;
// d <= 0 means no deadline.
func (c *Conn) RecvTimeout(want MsgType, v any, d time.Duration) error {
	t, payload, err := c.recv(want.String(), d)
	if err != nil {
		return err
	}
	if t != want {
		return &Error{
			Op:  "waiting for " + want.String() + " from " + c.peer,
			Err: fmt.Errorf("%w: expected %v, got %v", ErrUnexpectedType, want, t),
		}
	}
	return c.Decode(t, payload, v)
}

// RecvAny waits up to d (d <= 0: no deadline) for one frame of any type and
// returns its type and payload, which the caller owns; decode it with
// Decode. A MsgError frame is returned as MsgError with a nil payload and
// its *RemoteError.
func (c *Conn) RecvAny(d time.Duration) (MsgType, []byte, error) {
	return c.recv("message", d)
}

// recv reads one frame; what names the awaited message in errors. A
// MsgError frame is decoded into a *RemoteError.
func (c *Conn) recv(what string, d time.Duration) (MsgType, []byte, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	op := "waiting for " + what + " from " + c.peer
	if c.rbroken != nil {
		return 0, nil, &Error{Op: op, Err: c.rbroken}
	}
	if err := c.c.SetReadDeadline(deadline(d)); err != nil {
		return 0, nil, &Error{Op: op, Err: stripOpError(err)}
	}
	t, payload, started, err := readFrame(c.r)
	if err != nil {
		if !started {
			// Still on a frame boundary: report the bare cause (io.EOF,
			// i/o timeout, connection reset) without "read header".
			var pe *Error
			if errors.As(err, &pe) {
				err = pe.Err
			}
			if err == io.EOF {
				err = errPeerClosed
			}
		} else {
			c.rbroken = err
		}
		return 0, nil, &Error{Op: op, Err: err}
	}
	if t == MsgError {
		var re RemoteError
		if err := json.Unmarshal(payload, &re); err != nil { // lenient: keep the peer's message
			return 0, nil, &Error{Op: "decode error from " + c.peer, Err: err}
		}
		return MsgError, nil, &re
	}
	return t, payload, nil
}

// Decode decodes the JSON payload of a frame of type t (from RecvAny) into v
// like Recv does: unknown fields and trailing data are errors, and v may be
// nil only if the payload is empty. Errors never wrap io.EOF or
// io.ErrUnexpectedEOF, which are reserved for the connection.
func (c *Conn) Decode(t MsgType, payload []byte, v any) error {
	op := "decode " + t.String() + " from " + c.peer
	if v == nil {
		if len(payload) != 0 {
			return &Error{Op: op, Err: fmt.Errorf("unexpected %d-byte payload", len(payload))}
		}
		return nil
	}
	if len(payload) == 0 {
		return &Error{Op: op, Err: errors.New("empty payload")}
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("truncated JSON")
		}
		return &Error{Op: op, Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Op: op, Err: errors.New("trailing data after JSON value")}
	}
	return nil
}
