package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// The sizes of the per-QP destination record (perftest's KEY_MSG_SIZE and
// KEY_MSG_SIZE_GID), the terminating NUL included.
const (
	DestLen    = 59
	DestGIDLen = 108
)

// Dest is one QP's destination record, step 5 of the exchange: what the
// peer needs to reach this QP and its buffer.
type Dest struct {
	LID      uint16 // 0 on RoCE and iWARP
	OutReads uint16 // outstanding RDMA READ/atomic operations this side accepts
	QPN      uint32 // 24 bits
	PSN      uint32 // 24 bits: the first packet sequence number
	RKey     uint32
	VAddr    uint64 // the remote address of this QP's buffer
	GID      [16]byte
	SRQN     uint32 // the SRQ number (XRC, DC); 0 otherwise
}

// DestSize is the record's size with or without a GID: both sides send a
// GID when perftest's gid_index is set (-x, or always on RoCE).
func DestSize(withGID bool) int {
	if withGID {
		return DestGIDLen
	}
	return DestLen
}

// Encode returns the record in DestSize(withGID) bytes: the fields as
// fixed-width lower-case hex separated by ':', the GID as 16 two-digit
// bytes, then NUL padding.
func (d Dest) Encode(withGID bool) ([]byte, error) {
	if d.QPN > 0xffffff || d.PSN > 0xffffff {
		return nil, outOfRange("dest", "QPN 0x%x or PSN 0x%x is wider than 24 bits", d.QPN, d.PSN)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%04x:%04x:%06x:%06x:%08x:%016x:", d.LID, d.OutReads, d.QPN, d.PSN, d.RKey, d.VAddr)
	if withGID {
		for _, g := range d.GID {
			fmt.Fprintf(&s, "%02x:", g)
		}
		fmt.Fprintf(&s, "%08x:", d.SRQN)
	} else {
		fmt.Fprintf(&s, "%08x", d.SRQN)
	}
	b := make([]byte, DestSize(withGID))
	copy(b, s.String()) // the text is always one byte shorter than b: the NUL
	return b, nil
}

// destFields names the record's fields in order, for errors.
var destFields = [...]string{"LID", "out_reads", "QPN", "PSN", "RKey", "VAddr"}

// ParseDest reads a destination record of DestSize(withGID) bytes: hex
// fields separated by ':' up to the first NUL, each in range. field
// prefixes errors ("dest qp 0").
func ParseDest(b []byte, withGID bool, field string) (Dest, error) {
	if len(b) != DestSize(withGID) {
		return Dest{}, malformed(field, "%d bytes, want %d", len(b), DestSize(withGID))
	}
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	if n == len(b) {
		return Dest{}, malformed(field, "no terminating NUL in %d bytes", len(b))
	}
	parts := strings.Split(string(b[:n]), ":")
	want := 7 // six fields and the SRQN
	if withGID {
		if len(parts) == 24 && parts[23] == "" {
			parts = parts[:23] // the GID form ends with ':'
		}
		want = 23 // six fields, 16 GID bytes, the SRQN
	}
	if len(parts) != want {
		return Dest{}, malformed(field, "%d fields, want %d (%q)", len(parts), want, b[:n])
	}
	hex := func(name, s string, bits int) (uint64, error) {
		if s == "" || len(s) > 16 {
			return 0, malformed(field+": "+name, "%q is not hex", s)
		}
		v, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			return 0, malformed(field+": "+name, "%q is not hex", s)
		}
		if bits < 64 && v>>bits != 0 {
			return 0, outOfRange(field+": "+name, "0x%s is wider than %d bits", s, bits)
		}
		return v, nil
	}
	var d Dest
	bits := [...]int{16, 16, 24, 24, 32, 64}
	var v [6]uint64
	for i := range v {
		x, err := hex(destFields[i], parts[i], bits[i])
		if err != nil {
			return Dest{}, err
		}
		v[i] = x
	}
	d.LID, d.OutReads, d.QPN, d.PSN, d.RKey, d.VAddr = uint16(v[0]), uint16(v[1]), uint32(v[2]), uint32(v[3]), uint32(v[4]), v[5]
	if withGID {
		for i := range d.GID {
			x, err := hex(fmt.Sprintf("GID byte %d", i), parts[6+i], 8)
			if err != nil {
				return Dest{}, err
			}
			d.GID[i] = byte(x)
		}
	}
	x, err := hex("SRQN", parts[want-1], 32)
	if err != nil {
		return Dest{}, err
	}
	d.SRQN = uint32(x)
	return d, nil
}
