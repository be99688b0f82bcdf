package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
)

// Sentinel causes; *Error wraps one of them or an I/O error.
var (
	// ErrMalformed: the peer's bytes do not parse as the field.
	ErrMalformed = errors.New("malformed")
	// ErrRange: the field parses but its value is out of range.
	ErrRange = errors.New("out of range")
	// ErrTooOld: the peer's perftest is older than MinVersion.
	ErrTooOld = errors.New("perftest version too old")
	// ErrMismatch: a negotiated parameter differs between the sides.
	ErrMismatch = errors.New("parameter mismatch")
)

// Error is a failed step of the exchange, modelled on net.OpError: Field
// names the step or field ("version", "sys data: cache line size", "dest
// qp 0: QPN"), Op is "read", "write" or "parse", Err the cause.
type Error struct {
	Field string
	Op    string
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("perftest exchange: %s: %s: %v", e.Field, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether a deadline passed.
func (e *Error) Timeout() bool { return errors.Is(e.Err, os.ErrDeadlineExceeded) }

func parseErr(field string, err error) error { return &Error{Field: field, Op: "parse", Err: err} }

func malformed(field, format string, a ...any) error {
	return parseErr(field, fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, a...)...))
}

func outOfRange(field, format string, a ...any) error {
	return parseErr(field, fmt.Errorf("%w: "+format, append([]any{ErrRange}, a...)...))
}

// PeerClosed reports whether err is the peer going away at a step (a read
// that failed without a timeout, EOF, a closed connection): older perftest
// latency tools exit without the closing handshake.
func PeerClosed(err error) bool {
	var we *Error
	return errors.As(err, &we) && (errors.Is(we.Err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		(we.Op == "read" && !we.Timeout()))
}

// Mismatches lists the Mismatch values in Negotiate's joined error.
func Mismatches(err error) []Mismatch {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []Mismatch
	for _, e := range errs {
		var m Mismatch
		if errors.As(e, &m) {
			out = append(out, m)
		}
	}
	return out
}
