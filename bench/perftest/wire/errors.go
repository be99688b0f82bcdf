package wire

import (
	"errors"
	"fmt"
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
