package proto

import (
	"errors"
	"fmt"
	"net"
	"os"
)

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
