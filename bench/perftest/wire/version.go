package wire

import (
	"fmt"
	"strconv"
)

// VersionLen is the size of the version field (perftest's MAX_VERSION).
const VersionLen = 16

// Versions that change the exchange, compared as perftest compares them
// (atof of the string, so "6.1" is later than "6.06").
const (
	MinVersion        = 5.70 // older peers are refused, as perftest refuses them
	SysDataVersion    = 5.32 // the system data is swapped from here on
	MTUVersion        = 5.1  // the MTU is swapped from here on
	ShortMTUVersion   = 5.31 // ... in 2 bytes instead of 4
	Iters64Version    = 5.33 // the bandwidth report's iterations are 8 bytes
	NegotiateVersion  = 6.28 // the parameters are negotiated from here on
	TailMarkerVersion = 6.29 // the binary per-QP record (-R) has tail_markers_vaddr
	NewestKnown       = 6.29 // the newest exchange the drop-in was checked against
)

// OurVersion is what the drop-in announces: the newest exchange it
// speaks and was checked against (perftest 6.29's). Each side adapts its
// steps to the other's version, so an older perftest (Debian 12's 6.06)
// sees its own exchange, and a newer one sees a 6.29 peer: the drop-in
// then speaks 6.29's exchange, and a step that fails names both versions
// (Conn.Swap).
const OurVersion = "6.29"

// Version is a peer's version field.
type Version struct {
	Raw   string  // the text before the first NUL, e.g. "6.06"
	Value float64 // its numeric value, as perftest's atof reads it
}

func (v Version) String() string { return v.Raw }

// Newer reports whether v is newer than the newest exchange the drop-in
// knows (NewestKnown).
func (v Version) Newer() bool { return v.Value > NewestKnown+1e-9 }

// AtLeast reports whether v >= x, perftest's comparison. The margin
// absorbs float rounding ("5.70" against 5.70).
func (v Version) AtLeast(x float64) bool { return v.Value >= x-1e-9 }

// EncodeVersion returns the 16-byte, NUL-padded version field.
func EncodeVersion(v string) ([]byte, error) {
	if len(v) == 0 || len(v) >= VersionLen {
		return nil, outOfRange("version", "%q: want 1 to %d characters", v, VersionLen-1)
	}
	b := make([]byte, VersionLen)
	copy(b, v)
	return b, nil
}

// ParseVersion reads the peer's 16-byte version field: printable ASCII up
// to the first NUL, starting with a number. It refuses peers older than
// MinVersion (ErrTooOld), as perftest does.
func ParseVersion(b []byte) (Version, error) {
	if len(b) != VersionLen {
		return Version{}, malformed("version", "%d bytes, want %d", len(b), VersionLen)
	}
	n := 0
	for n < len(b) && b[n] != 0 {
		if b[n] < 0x20 || b[n] > 0x7e {
			return Version{}, malformed("version", "byte %d is 0x%02x, not printable ASCII (%q)", n, b[n], b)
		}
		n++
	}
	raw := string(b[:n])
	num := 0 // the leading number: digits, one dot, digits (atof's prefix)
	for dot := false; num < len(raw); num++ {
		c := raw[num]
		if c == '.' && !dot {
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
	}
	f, err := strconv.ParseFloat(raw[:num], 64)
	if num == 0 || err != nil {
		return Version{}, malformed("version", "%q does not start with a version number (is the peer perftest?)", raw)
	}
	v := Version{Raw: raw, Value: f}
	if !v.AtLeast(MinVersion) {
		return v, parseErr("version", fmt.Errorf("%w: the peer is perftest %s; the exchange needs %.2f or later", ErrTooOld, raw, MinVersion))
	}
	return v, nil
}
