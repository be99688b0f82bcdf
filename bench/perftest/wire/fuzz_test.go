package wire

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// FuzzDest: ParseDest never panics, and what it accepts encodes back to
// a record it parses to the same value.
func FuzzDest(f *testing.F) {
	f.Add([]byte(destNoGID+"\x00"), false)
	f.Add(append([]byte(destGID), 0), true)
	f.Add(make([]byte, 108), true)
	f.Fuzz(func(t *testing.T, b []byte, withGID bool) {
		d, err := ParseDest(b, withGID, "dest")
		if err != nil {
			return
		}
		enc, err := d.Encode(withGID)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode %+v: %v", b, d, err)
		}
		if d2, err := ParseDest(enc, withGID, "dest"); err != nil || d2 != d {
			t.Fatalf("round trip of %+v: %+v, %v", d, d2, err)
		}
	})
}

// fuzzConn is a net.Conn reading a fixed stream (the peer's bytes) and
// discarding what is written.
type fuzzConn struct {
	net.Conn
	r io.Reader
}

func (c *fuzzConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *fuzzConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }
func (c *fuzzConn) Close() error                     { return nil }

// FuzzExchange plays the server's side of the whole exchange against
// arbitrary peer bytes, with ASCII or (binary, -R) binary per-QP records:
// every step either parses or fails with an error; nothing panics.
func FuzzExchange(f *testing.F) {
	ver := func(s string) []byte { b, _ := EncodeVersion(s); return b }
	seed := func(v string, rest ...[]byte) []byte {
		return bytes.Join(append([][]byte{ver(v), EncodeInt32(4096), EncodeInt32(64), []byte("3\x00")}, rest...), nil)
	}
	gid := append([]byte(destGID), 0)
	bin, _ := perftestBinRecord().EncodeBinary(DestBinLen)
	bin629, _ := perftestBinRecord().EncodeBinary(DestBinLen629)
	f.Add(seed("6.06", gid), false)
	f.Add(seed("6.06", make([]byte, DestBinLen), bin), true)
	legacy, _ := writeLat64().EncodeLegacy(LegacyLen, nil)
	f.Add(seed("6.28", legacy, gid), false)
	f.Add(seed("6.29", legacy, bin629), true)
	f.Add(seed("6.31", legacy, gid), false)
	for _, r := range recordingSeeds(f) { // what perftest 6.06, 6.28 and 6.29 sent (testdata/exchanges)
		f.Add(r.peer, r.binary)
	}
	f.Add([]byte("RDMB\x00\x01\x00\x01\x00\x00\x00\x00"), false)
	f.Fuzz(func(t *testing.T, peer []byte, binary bool) {
		c := &Conn{C: &fuzzConn{r: bytes.NewReader(peer)}, Binary: binary}
		if _, err := c.Versions(OurVersion); err != nil {
			return
		}
		if _, err := c.SysData(SysData{4096, 64}); err != nil {
			return
		}
		if _, err := c.MTU(3); err != nil {
			return
		}
		if _, _, err := c.Negotiate(writeLat64()); err != nil {
			return
		}
		if _, err := c.Dest(Dest{QPN: 1}, true, "dest qp 0"); err != nil {
			return
		}
		_, _ = c.SwapBWReport(BWReport{})
	})
}

// FuzzDestBinary: ParseBinary never panics, and what it accepts encodes
// back to a record it parses to the same value.
func FuzzDestBinary(f *testing.F) {
	rec, _ := perftestBinRecord().EncodeBinary(DestBinLen)
	f.Add(rec)
	f.Add(make([]byte, DestBinLen))
	rec629, _ := perftestBinRecord().EncodeBinary(DestBinLen629)
	f.Add(rec629)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseBinary(b, "dest")
		if err != nil {
			return
		}
		enc, err := d.EncodeBinary(len(b))
		if err != nil {
			t.Fatalf("accepted %x but cannot encode %+v: %v", b, d, err)
		}
		if d2, err := ParseBinary(enc, "dest"); err != nil || d2 != d {
			t.Fatalf("round trip of %+v: %+v, %v", d, d2, err)
		}
	})
}
