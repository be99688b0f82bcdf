package proto

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// Version is the control protocol version this package speaks. A frame
// with another version is rejected with a *VersionError. Version 2 added
// the authentication messages (MsgChallenge, MsgAuth) and the rdma_cm
// token; version 3 has the server send heartbeats while a test runs, as
// the client does; version 4 adds heartbeats to the --verify pass, the
// doctor request, the too-many and dropped refusals of unauthenticated
// connections, and the Spec's address-stepping and choice fields.
const Version = 4

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
	MsgHello     MsgType = iota + 1 // client -> server: version, tool, host
	MsgHelloAck                     // server -> client
	MsgTest                         // client -> server: parameters of one test
	MsgQPInfo                       // both ways: QP numbers, PSN, GID, rkey, address, length
	MsgReady                        // barrier: both ways
	MsgResult                       // server -> client or client -> server: measured data
	MsgError                        // either way: a RemoteError payload, the peer gives up on the current test
	MsgBye                          // client -> server: session over
	MsgVerify                       // both ways: one message of a test's --verify pass
	MsgChallenge                    // server -> client: the server's nonce (a server with a key)
	MsgAuth                         // client -> server: the client's proof of the key
	MsgDoctor                       // client -> server: a request for the server's doctor checks (no payload); server -> client: a Doctor

	msgTypeEnd // one past the last known type
)

var msgTypeNames = [...]string{
	MsgHello:     "hello",
	MsgHelloAck:  "hello-ack",
	MsgTest:      "test",
	MsgQPInfo:    "qp-info",
	MsgReady:     "ready",
	MsgResult:    "result",
	MsgError:     "error",
	MsgBye:       "bye",
	MsgVerify:    "verify",
	MsgChallenge: "challenge",
	MsgAuth:      "auth",
	MsgDoctor:    "doctor",
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
		if v, ok := perftestVersion(h[:]); ok {
			return &PerftestPeerError{Version: v}
		}
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
