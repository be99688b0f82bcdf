package proto

import "fmt"

// PerftestPeerError is a bad magic that is a perftest version string:
// the peer is perftest's ib_* tool, which starts its exchange with
// "6.06\0..." where rdmabench sends its header. It unwraps to
// ErrBadMagic.
type PerftestPeerError struct {
	Version string // e.g. "6.06"
}

func (e *PerftestPeerError) Error() string {
	return fmt.Sprintf("%v: the peer is perftest %s (it sent its version string %q), not rdmabench: "+
		"to face a perftest tool, run rdmabench's drop-in, a link to rdmabench named after that tool "+
		"(ib_send_lat, ib_write_bw, ...) with the same arguments (docs/perftest.md)", ErrBadMagic, e.Version, e.Version)
}

// Unwrap returns ErrBadMagic.
func (e *PerftestPeerError) Unwrap() error { return ErrBadMagic }

// perftestVersion returns the version string at the start of h if h looks
// like perftest's version field: digits, a dot, digits, then NULs or
// printable suffix characters up to a NUL.
func perftestVersion(h []byte) (string, bool) {
	n := 0
	for n < len(h) && h[n] != 0 {
		if h[n] < 0x20 || h[n] > 0x7e {
			return "", false
		}
		n++
	}
	s := h[:n]
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[i] != '.' || i+1 == len(s) || s[i+1] < '0' || s[i+1] > '9' {
		return "", false
	}
	for _, c := range h[n:] {
		if c != 0 {
			return "", false
		}
	}
	return string(s), true
}
