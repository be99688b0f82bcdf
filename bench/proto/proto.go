package proto

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Control protocol
//
// The server and the client talk over one TCP connection before and between
// RDMA tests. Every message is one frame: a 12-byte big-endian header
//
//	magic   uint32  Magic ("RDMB")
//	version uint16  Version
//	type    uint16  MsgType
//	length  uint32  payload length in bytes, at most MaxPayload
//
// followed by length bytes of JSON payload (possibly none).

// Version is the control protocol version this package speaks. A frame
// with another version is rejected with a *VersionError.
const Version = 1

// Magic starts every control frame: "RDMB" in ASCII, big-endian.
const Magic uint32 = 0x52444D42

// MaxPayload is the largest frame payload in bytes (1 MiB). A result with
// encoded histograms is about 100 KiB.
const MaxPayload = 1 << 20

// frameHeaderLen is the size of a frame header in bytes.
const frameHeaderLen = 12

// payloadChunk is the step, in bytes, in which ReadFrame grows a payload
// buffer, so that a peer that announces MaxPayload bytes and sends fewer
// cannot make us allocate the whole announced length up front.
const payloadChunk = 64 << 10

// MsgType is the type of a control frame.
type MsgType uint16

// Message types. The payload structs are defined by the callers; the comment
// says who sends what.
const (
	MsgHello    MsgType = iota + 1 // client -> server: version, tool, host
	MsgHelloAck                    // server -> client
	MsgTest                        // client -> server: parameters of one test
	MsgQPInfo                      // both ways: QP numbers, PSN, GID, rkey, address, length
	MsgReady                       // barrier: both ways
	MsgResult                      // server -> client or client -> server: measured data
	MsgError                       // either way: a RemoteError payload, the peer gives up on the current test
	MsgBye                         // client -> server: session over

	msgTypeEnd // one past the last known type
)

var msgTypeNames = [...]string{
	MsgHello:    "hello",
	MsgHelloAck: "hello-ack",
	MsgTest:     "test",
	MsgQPInfo:   "qp-info",
	MsgReady:    "ready",
	MsgResult:   "result",
	MsgError:    "error",
	MsgBye:      "bye",
}

// String returns the lowercase name used in error messages ("ready",
// "qp-info"), or "MsgType(N)" for an unknown type.
func (t MsgType) String() string {
	if t.known() {
		return msgTypeNames[t]
	}
	return "MsgType(" + strconv.Itoa(int(t)) + ")"
}

func (t MsgType) known() bool { return t >= MsgHello && t < msgTypeEnd }

// Sentinel errors of the framing layer. Callers test them with errors.Is; the
// returned errors carry the offending values.
var (
	// ErrBadMagic: the frame does not start with Magic (not an
	// rdmabench peer, or the stream lost its framing).
	ErrBadMagic = errors.New("bad magic")
	// ErrTooLarge: a payload is longer than MaxPayload.
	ErrTooLarge = errors.New("payload too large")
	// ErrUnknownType: the frame's type is not a known MsgType.
	ErrUnknownType = errors.New("unknown message type")
	// ErrVersion: the peer speaks another protocol version; see VersionError.
	ErrVersion = errors.New("protocol version mismatch")
	// ErrUnexpectedType: a valid frame of another type than the one awaited.
	ErrUnexpectedType = errors.New("unexpected message type")
)

// Error is a failed control-protocol operation, modelled on
// net.OpError. Op names the operation ("read header", "read payload",
// "decode hello from 10.0.0.1:18515", "waiting for ready from
// 10.0.0.1:18515"); Err is the cause. Its message starts with "control: ".
type Error struct {
	Op  string
	Err error
}

var _ net.Error = (*Error)(nil)

// Error returns "control: <op>: <err>"; nested ProtoErrors are joined
// without repeating the prefix.
func (e *Error) Error() string { return "control: " + e.msg() }

func (e *Error) msg() string {
	switch inner := e.Err.(type) {
	case nil:
		return e.Op
	case *Error:
		if e.Op == "" {
			return inner.msg()
		}
		return e.Op + ": " + inner.msg()
	default:
		if e.Op == "" {
			return inner.Error()
		}
		return e.Op + ": " + inner.Error()
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the operation failed because a deadline passed
// (errors.Is(e, os.ErrDeadlineExceeded)).
func (e *Error) Timeout() bool { return errors.Is(e.Err, os.ErrDeadlineExceeded) }

// Temporary is the same as Timeout; it exists to satisfy net.Error.
func (e *Error) Temporary() bool { return e.Timeout() }

// VersionError is a frame whose protocol version is not ours. It unwraps to
// ErrVersion.
type VersionError struct {
	Got  uint16 // the peer's version
	Want uint16 // Version
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("peer speaks protocol version %d, this side speaks version %d", e.Got, e.Want)
}

// Unwrap returns ErrVersion.
func (e *VersionError) Unwrap() error { return ErrVersion }

// RemoteError is the payload of MsgError: the error that made the peer give
// up on the current test. Code is an optional machine-readable reason
// ("busy", "version", ...); its values are defined by the callers.
type RemoteError struct {
	Msg  string `json:"msg"`
	Code string `json:"code,omitempty"`
}

// Error returns "peer: <msg>".
func (e *RemoteError) Error() string { return "peer: " + e.Msg }

// AppendFrame appends one frame of type t carrying payload to dst and
// returns the extended slice. It returns dst unchanged and an error wrapping
// ErrTooLarge if len(payload) > MaxPayload, or ErrUnknownType if t is not a
// known type. payload is copied; the caller keeps ownership of it.
func AppendFrame(dst []byte, t MsgType, payload []byte) ([]byte, error) {
	if !t.known() {
		return dst, &Error{Op: "encode frame", Err: fmt.Errorf("%w %d", ErrUnknownType, uint16(t))}
	}
	if len(payload) > MaxPayload {
		return dst, &Error{Op: "encode " + t.String(), Err: tooLarge(uint64(len(payload)))}
	}
	dst = binary.BigEndian.AppendUint32(dst, Magic)
	dst = binary.BigEndian.AppendUint16(dst, Version)
	dst = binary.BigEndian.AppendUint16(dst, uint16(t))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...), nil
}

func tooLarge(n uint64) error {
	return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, MaxPayload)
}

// ReadFrame reads exactly one frame from r and returns its type and payload.
// The payload (nil if empty) is newly allocated and owned by the caller.
// The header is checked (magic, version, type, length <= MaxPayload) before
// any payload memory is allocated, and the payload buffer grows with the
// bytes actually received, never beyond the announced length.
//
// If r returns io.EOF before the first header byte, ReadFrame returns io.EOF
// itself (the peer closed the connection between frames). All other errors
// are *Error with Op "read header" or "read payload"; a stream that
// ends inside a frame gives an error wrapping io.ErrUnexpectedEOF, and a bad
// header wraps ErrBadMagic, ErrVersion (*VersionError), ErrUnknownType or
// ErrTooLarge.
func ReadFrame(r io.Reader) (MsgType, []byte, error) {
	t, p, _, err := readFrame(r)
	return t, p, err
}

// readFrame is ReadFrame that also reports whether any byte was consumed:
// if not, the stream is still aligned on a frame boundary and the read can
// be retried (for example after a deadline).
func readFrame(r io.Reader) (t MsgType, payload []byte, started bool, err error) {
	var h [frameHeaderLen]byte
	n, err := io.ReadFull(r, h[:])
	if err != nil {
		switch {
		case n == 0 && err == io.EOF:
			return 0, nil, false, io.EOF
		case n == 0:
			return 0, nil, false, &Error{Op: "read header", Err: err}
		default:
			return 0, nil, true, &Error{Op: "read header", Err: partial(err, n, frameHeaderLen)}
		}
	}
	if err := checkHeader(h); err != nil {
		return 0, nil, true, &Error{Op: "read header", Err: err}
	}
	t = MsgType(binary.BigEndian.Uint16(h[6:]))
	length := int(binary.BigEndian.Uint32(h[8:])) // <= MaxPayload after checkHeader
	if length == 0 {
		return t, nil, true, nil
	}
	payload, err = readPayload(r, length)
	if err != nil {
		return 0, nil, true, &Error{Op: "read " + t.String() + " payload", Err: err}
	}
	return t, payload, true, nil
}

func checkHeader(h [frameHeaderLen]byte) error {
	if m := binary.BigEndian.Uint32(h[0:]); m != Magic {
		return fmt.Errorf("%w 0x%08x (%q), want 0x%08x (%q)", ErrBadMagic, m, h[0:4], Magic, "RDMB")
	}
	if v := binary.BigEndian.Uint16(h[4:]); v != Version {
		return &VersionError{Got: v, Want: Version}
	}
	if t := MsgType(binary.BigEndian.Uint16(h[6:])); !t.known() {
		return fmt.Errorf("%w %d", ErrUnknownType, uint16(t))
	}
	if n := binary.BigEndian.Uint32(h[8:]); n > MaxPayload {
		return tooLarge(uint64(n))
	}
	return nil
}

// partial describes an error in the middle of a fixed-size read. A bare
// io.EOF there becomes io.ErrUnexpectedEOF.
func partial(err error, got, want int) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w after %d of %d bytes", err, got, want)
}

// readPayload reads exactly n > 0 bytes, growing its buffer in steps of at
// most payloadChunk (doubling), so memory follows the bytes received.
func readPayload(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, payloadChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, partial(err, len(buf), n)
		}
	}
	return buf, nil
}

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

// SendError sends err to the peer as a MsgError. If err is (or wraps) a
// *RemoteError, that one is sent as is, so a caller can set Code; otherwise
// the payload is RemoteError{Msg: err.Error()}. Messages longer than 64 KiB
// are truncated.
func (c *Conn) SendError(err error) error {
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
	return c.Send(MsgError, &re)
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
