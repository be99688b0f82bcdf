package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// DefaultTimeout bounds each read and write of the exchange.
const DefaultTimeout = 30 * time.Second

// Conn is one side of the exchange over a TCP connection (perftest's
// default), or with Binary over a message channel in which each Write is
// one message and a Read returns what is left of one (-R: an rdma_cm QP,
// bench/dropin/peer/cm.go). Client: the side that connected; it writes first
// in every swap.
type Conn struct {
	C       net.Conn
	Client  bool
	Timeout time.Duration // per read and per write; 0: DefaultTimeout
	Peer    Version       // set by Versions
	Ours    Version       // set by Versions
	// Trace, when set, gets one line per swap: the field, and what was
	// sent and received (for RDMABENCH_DROPIN_LOG).
	Trace func(field string, sent, got []byte, err error)
	// Binary: the per-QP records are perftest's binary struct (-R,
	// destbin.go), not the ASCII ones.
	Binary bool
}

func (c *Conn) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// Swap sends mine and reads n bytes of the peer's, in perftest's order
// (client: write, then read; server: read, then write).
func (c *Conn) Swap(field string, mine []byte, n int) (got []byte, err error) {
	if c.Trace != nil {
		defer func() { c.Trace(field, mine, got, err) }()
	}
	if c.Peer.Newer() {
		defer func() {
			if err != nil {
				err = fmt.Errorf("%w (the peer is perftest %s, newer than %s, the newest exchange the drop-in speaks)", err, c.Peer, OurVersion)
			}
		}()
	}
	if c.Client {
		if err := c.write(field, mine); err != nil {
			return nil, err
		}
		return c.read(field, n)
	}
	b, err := c.read(field, n)
	if err != nil {
		return nil, err
	}
	return b, c.write(field, mine)
}

func (c *Conn) write(field string, b []byte) error {
	if err := c.C.SetWriteDeadline(time.Now().Add(c.timeout())); err != nil {
		return &Error{Field: field, Op: "write", Err: err}
	}
	if _, err := c.C.Write(b); err != nil {
		return &Error{Field: field, Op: "write", Err: err}
	}
	return nil
}

func (c *Conn) read(field string, n int) ([]byte, error) {
	if err := c.C.SetReadDeadline(time.Now().Add(c.timeout())); err != nil {
		return nil, &Error{Field: field, Op: "read", Err: err}
	}
	b := make([]byte, n)
	if got, err := io.ReadFull(c.C, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("the peer closed the connection after %d of %d bytes", got, n)
		}
		return nil, &Error{Field: field, Op: "read", Err: err}
	}
	return b, nil
}

// Versions is step 1: swap version fields, and refuse a peer older than
// MinVersion.
func (c *Conn) Versions(ours string) (Version, error) {
	b, err := EncodeVersion(ours)
	if err != nil {
		return Version{}, err
	}
	rb, err := c.Swap("version", b, VersionLen)
	if err != nil {
		return Version{}, err
	}
	c.Ours, _ = ParseVersion(b)
	v, err := ParseVersion(rb)
	c.Peer = v
	return v, err
}

// SysData is step 2 (skipped for a peer older than SysDataVersion): swap
// and merge the cycle-buffer and cache-line sizes.
func (c *Conn) SysData(ours SysData) (SysData, error) {
	if !c.Peer.AtLeast(SysDataVersion) {
		return ours, nil
	}
	rb, err := c.Swap("sys data: cycle buffer", EncodeInt32(ours.CycleBuffer), 4)
	if err != nil {
		return SysData{}, err
	}
	var peer SysData
	if peer.CycleBuffer, err = ParseCycleBuffer(rb); err != nil {
		return SysData{}, err
	}
	if rb, err = c.Swap("sys data: cache line size", EncodeInt32(ours.CacheLineSize), 4); err != nil {
		return SysData{}, err
	}
	if peer.CacheLineSize, err = ParseCacheLine(rb); err != nil {
		return SysData{}, err
	}
	return ours.Merge(peer), nil
}

// MTU is step 3: swap the MTU enums; both sides use the smaller.
func (c *Conn) MTU(ours int) (int, error) {
	if !c.Peer.AtLeast(MTUVersion) {
		return ours, nil
	}
	n := MTULen(c.Peer)
	b, err := EncodeMTU(ours, n)
	if err != nil {
		return 0, err
	}
	rb, err := c.Swap("mtu", b, n)
	if err != nil {
		return 0, err
	}
	peer, err := ParseMTU(rb)
	if err != nil {
		return 0, err
	}
	return min(ours, peer), nil
}

// Negotiate is step 4 for a peer >= 6.28 (none for older ones: ok
// false): it swaps the fixed record (the form of 6.28 and 6.29, which a
// newer perftest speaks to a 6.29 peer) and returns the peer's parameters
// and every mismatch as one error joining Mismatch values (errors.Is
// ErrMismatch). legacyLen picks the record's size (LegacyLen unless the
// peer was built without mlx5dv).
func (c *Conn) Negotiate(ours Params, legacyLen int) (peer Params, ok bool, err error) {
	// each side decides on the other's version: both must be 6.28 or later
	if !c.Peer.AtLeast(NegotiateVersion) || !c.Ours.AtLeast(NegotiateVersion) {
		return Params{}, false, nil
	}
	b, err := ours.EncodeLegacy(legacyLen, nil)
	if err != nil {
		return Params{}, false, err
	}
	rb, err := c.Swap("negotiation", b, legacyLen)
	if err != nil {
		return Params{}, false, err
	}
	if peer, _, err = ParseLegacy(rb); err != nil {
		return Params{}, false, err
	}
	var errs []error
	for _, m := range Compare(ours, peer) {
		errs = append(errs, m)
	}
	return peer, true, errors.Join(errs...)
}

// Dest is step 5 for one QP (and every barrier after it): swap
// destination records.
func (c *Conn) Dest(ours Dest, withGID bool, field string) (Dest, error) {
	if c.Binary {
		n := DestBinLenFor(c.Peer)
		b, err := ours.EncodeBinary(n)
		if err != nil {
			return Dest{}, err
		}
		rb, err := c.Swap(field, b, n)
		if err != nil {
			return Dest{}, err
		}
		return ParseBinary(rb, field)
	}
	b, err := ours.Encode(withGID)
	if err != nil {
		return Dest{}, err
	}
	rb, err := c.Swap(field, b, DestSize(withGID))
	if err != nil {
		return Dest{}, err
	}
	return ParseDest(rb, withGID, field)
}
