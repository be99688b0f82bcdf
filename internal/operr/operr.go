// Package operr is the error of a failed C call, shared by the cgo packages
// (verbs, bench/sockeng) so that both report and unwrap failures alike.
package operr

import "strings"

// Error is a failed C call: Op names the function, Err is usually a
// syscall.Errno. Detail, when set, names the arguments or the loop and what
// it waited for.
type Error struct {
	Op     string
	Detail string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Detail != "" {
		b.WriteString(" (")
		b.WriteString(e.Detail)
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error (usually a syscall.Errno).
func (e *Error) Unwrap() error { return e.Err }
