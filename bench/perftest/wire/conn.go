package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

// SetTimeout sets Timeout, the bound of each later read and write (0:
// DefaultTimeout).
func (c *Conn) SetTimeout(d time.Duration) { c.Timeout = d }

// SetClient sets Client, the side that writes first in each later swap.
func (c *Conn) SetClient(client bool) { c.Client = client }

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
	defer func() { err = c.newer(err) }()
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

// newer adds to err, where the peer is newer than the drop-in's exchange,
// that it is.
func (c *Conn) newer(err error) error {
	if err != nil && c.Peer.Newer() {
		return fmt.Errorf("%w (the peer is perftest %s, newer than %s, the newest exchange the drop-in speaks)", err, c.Peer, OurVersion)
	}
	return err
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
// ErrMismatch).
//
// The record is LegacyLen bytes from a perftest built with mlx5dv (the
// usual build) and LegacyLenNoMLX5DV without it, and nothing in the
// exchange says which. The drop-in reads the peer's first
// LegacyLenNoMLX5DV bytes and then waits up to negotiateTailWait for the
// rest (readRecord); as the server it answers in the peer's size. As the
// client it must write first, so it sends LegacyLen; a server built
// without mlx5dv then answers 312 bytes, which ends the exchange with an
// error that says so (perftest's two builds cannot talk to each other
// either; the drop-in's server talks to both).
func (c *Conn) Negotiate(ours Params) (peer Params, ok bool, err error) {
	// each side decides on the other's version: both must be 6.28 or later
	if !c.Peer.AtLeast(NegotiateVersion) || !c.Ours.AtLeast(NegotiateVersion) {
		return Params{}, false, nil
	}
	const field = "negotiation"
	var mine, rb []byte
	if c.Client {
		if mine, err = ours.EncodeLegacy(LegacyLen, nil); err != nil {
			return Params{}, false, err
		}
		if err = c.write(field, mine); err == nil {
			rb, err = c.readRecord(field)
		} else if c.Binary {
			// -R: one message, into a receive buffer of the server's record size
			err = fmt.Errorf("%w (a perftest server built without mlx5dv receives a %d-byte record, and its receive refuses the %d the drop-in's client sends: "+
				"run the drop-in as the server, which answers either build)", err, LegacyLenNoMLX5DV, LegacyLen)
		}
		if err == nil && len(rb) == LegacyLenNoMLX5DV {
			err = &Error{Field: field, Op: "read", Err: fmt.Errorf("the server's record is %d bytes, a perftest built without mlx5dv: "+
				"it read %d of the %d bytes the drop-in's client sends (a build with mlx5dv, the usual one), and cannot go on; "+
				"run the drop-in as the server (it answers either build), or a perftest built with mlx5dv", len(rb), len(rb), len(mine))}
		}
	} else {
		if rb, err = c.readRecord(field); err == nil {
			if mine, err = ours.EncodeLegacy(len(rb), nil); err == nil {
				err = c.write(field, mine)
			}
		}
	}
	if c.Trace != nil {
		c.Trace(field, mine, rb, err)
	}
	if err != nil {
		return Params{}, false, c.newer(err)
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

// negotiateTailWait bounds the wait for the last LegacyLen -
// LegacyLenNoMLX5DV bytes of the peer's record once its first
// LegacyLenNoMLX5DV are in: perftest writes its record in one piece, so a
// build with mlx5dv has sent them with the rest, and one without sends
// nothing more until it has the drop-in's answer.
var negotiateTailWait = time.Second

// readRecord reads the peer's negotiation record: LegacyLenNoMLX5DV bytes,
// and the mlx5dv build's LegacyLen - LegacyLenNoMLX5DV more if they come
// within negotiateTailWait.
func (c *Conn) readRecord(field string) ([]byte, error) {
	b, err := c.read(field, LegacyLenNoMLX5DV)
	if err != nil {
		return nil, err
	}
	if err := c.C.SetReadDeadline(time.Now().Add(negotiateTailWait)); err != nil {
		return nil, &Error{Field: field, Op: "read", Err: err}
	}
	tail := make([]byte, LegacyLen-LegacyLenNoMLX5DV)
	got, err := io.ReadFull(c.C, tail)
	switch {
	case got == len(tail):
		return append(b, tail...), nil
	case got == 0 && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF)):
		return b, nil // a build without mlx5dv: it waits for our record
	default:
		return nil, &Error{Field: field, Op: "read", Err: fmt.Errorf("a record of %d bytes: want %d (perftest built with mlx5dv) or %d (without)",
			LegacyLenNoMLX5DV+got, LegacyLen, LegacyLenNoMLX5DV)}
	}
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
