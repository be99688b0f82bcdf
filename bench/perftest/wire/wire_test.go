package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	pad := func(s string) []byte { b := make([]byte, VersionLen); copy(b, s); return b }
	for _, tc := range []struct {
		name string
		in   []byte
		want float64
		err  error
		msg  string
	}{
		{"debian 6.06", pad("6.06"), 6.06, nil, ""},
		{"6.30", pad("6.30"), 6.30, nil, ""},
		{"suffix", pad("6.28-rc1"), 6.28, nil, ""},
		{"exactly 5.70", pad("5.70"), 5.70, nil, ""},
		{"too old", pad("5.60"), 5.60, ErrTooOld, "the peer is perftest 5.60; the exchange needs 5.70 or later"},
		{"rdmabench magic", pad("RDMB"), 0, ErrMalformed, `"RDMB" does not start with a version number`},
		{"binary", append([]byte{'6', 1, '0'}, make([]byte, 13)...), 0, ErrMalformed, "not printable"},
		{"short", []byte("6.06"), 0, ErrMalformed, "4 bytes, want 16"},
		{"empty", make([]byte, 16), 0, ErrMalformed, "does not start with a version number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseVersion(tc.in)
			if !errors.Is(err, tc.err) || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
				t.Fatalf("err %v, want %v containing %q", err, tc.err, tc.msg)
			}
			if err == nil && v.Value != tc.want {
				t.Fatalf("value %v, want %v", v.Value, tc.want)
			}
		})
	}
	b, err := EncodeVersion(OurVersion)
	if err != nil || !bytes.Equal(b, pad("6.29")) {
		t.Fatalf("EncodeVersion: %q %v", b, err)
	}
	if _, err := EncodeVersion(strings.Repeat("9", 16)); !errors.Is(err, ErrRange) {
		t.Fatalf("16-character version: %v", err)
	}
}

func TestSysDataAndMTU(t *testing.T) {
	if v, err := ParseCycleBuffer(EncodeInt32(4096)); err != nil || v != 4096 {
		t.Fatalf("cycle buffer: %d %v", v, err)
	}
	for _, bad := range []int32{0, -4096, 3000, 1 << 31 >> 0 & 0x7fffffff} {
		if _, err := ParseCycleBuffer(EncodeInt32(bad)); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "sys data: cycle buffer") {
			t.Errorf("cycle buffer %d: %v", bad, err)
		}
	}
	if _, err := ParseCacheLine(EncodeInt32(8192)); !errors.Is(err, ErrRange) {
		t.Errorf("cache line 8192: %v", err)
	}
	if got := (SysData{4096, 64}).Merge(SysData{65536, 128}); got != (SysData{65536, 128}) {
		t.Errorf("merge: %+v", got)
	}
	for _, tc := range []struct {
		in   string
		want int
		err  error
	}{{"3\x00", 3, nil}, {"5\x00", 5, nil}, {"1\x00\x00\x00", 1, nil}, {"6\x00", 0, ErrRange}, {"0\x00", 0, ErrRange},
		{"\x00\x00", 0, ErrMalformed}, {"x\x00", 0, ErrMalformed}, {"99999", 0, ErrMalformed}} {
		got, err := ParseMTU([]byte(tc.in))
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("ParseMTU(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	if b, _ := EncodeMTU(MTUEnum(1024), MTULen(Version{Value: 6.06})); string(b) != "3\x00" {
		t.Errorf("EncodeMTU(1024) = %q", b)
	}
	if MTULen(Version{Value: 5.30}) != 4 || MTUBytes(5) != 4096 || MTUEnum(4096) != 5 || MTUEnum(1500) != 0 {
		t.Error("MTU helpers")
	}
}

// Records perftest 6.06 (Debian 12) sent in the test guest (rxe0, GID
// index 1 = ::ffff:127.0.0.1), read with RDMABENCH_DROPIN_LOG=1: its
// ib_read_lat client (out_reads 0x80, its rxe maximum) and, without a
// GID, the same fields in the 59-byte form.
const (
	destNoGID = "0000:0080:000013:bdb94c:000004a6:000055b8f9803000:00000000"
	destGID   = "0000:0080:000013:bdb94c:000004a6:000055b8f9803000:00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:01:00000000:"
)

func TestDest(t *testing.T) {
	gid := [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}
	for _, tc := range []struct {
		name    string
		text    string
		withGID bool
		want    Dest
	}{
		{"no gid", destNoGID, false, Dest{OutReads: 0x80, QPN: 0x13, PSN: 0xbdb94c, RKey: 0x4a6, VAddr: 0x55b8f9803000}},
		{"gid", destGID, true, Dest{OutReads: 0x80, QPN: 0x13, PSN: 0xbdb94c, RKey: 0x4a6, VAddr: 0x55b8f9803000, GID: gid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.text)+1 != DestSize(tc.withGID) {
				t.Fatalf("record text is %d bytes, want %d and a NUL", len(tc.text), DestSize(tc.withGID)-1)
			}
			b := make([]byte, DestSize(tc.withGID))
			copy(b, tc.text)
			d, err := ParseDest(b, tc.withGID, "dest qp 0")
			if err != nil || d != tc.want {
				t.Fatalf("ParseDest = %+v, %v; want %+v", d, err, tc.want)
			}
			enc, err := d.Encode(tc.withGID)
			if err != nil || !bytes.Equal(enc, b) {
				t.Fatalf("Encode = %q, %v; want %q", enc, err, b)
			}
		})
	}
	rec := func(s string, n int) []byte { b := make([]byte, n); copy(b, s); return b }
	for _, tc := range []struct {
		name    string
		in      []byte
		withGID bool
		err     error
		msg     string
	}{
		{"short", []byte(destNoGID), false, ErrMalformed, "58 bytes, want 59"},
		{"no NUL", []byte(destNoGID + "0"), false, ErrMalformed, "no terminating NUL"},
		{"few fields", rec("0000:0000:000011", 59), false, ErrMalformed, "3 fields, want 7"},
		{"bad hex", rec(strings.Replace(destNoGID, "bdb94c", "bdz94c", 1), 59), false, ErrMalformed, "dest qp 0: PSN"},
		{"wide QPN", rec("0000:0000:1000013:db94c:000004a6:000055b8f9803000:00000000", 59), false, ErrRange, "dest qp 0: QPN"},
		{"gid record as no gid", rec(destGID, 108)[:59], false, ErrMalformed, "no terminating NUL"},
		{"bad gid byte", rec(strings.Replace(strings.Replace(destGID, ":ff:ff:", ":ff:1ff:", 1), ":00000000:", ":0000000:", 1), 108), true, ErrRange, "GID byte 11"},
		{"empty", make([]byte, 108), true, ErrMalformed, "1 fields, want 23"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDest(tc.in, tc.withGID, "dest qp 0")
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err %v, want %v containing %q", err, tc.err, tc.msg)
			}
		})
	}
	if _, err := (Dest{QPN: 1 << 24}).Encode(false); !errors.Is(err, ErrRange) {
		t.Fatalf("Encode of a 25-bit QPN: %v", err)
	}
}

func writeLat64() Params {
	return Params{Verb: VerbWrite, AtomicType: FetchAndAdd, ReportFmt: ReportMiB, Size: 64, Iters: 1000, NumQPs: 1, Duration: 5, MaxQPRdAtom: 16}
}

// TestLegacyRecord checks the 6.28/6.29 record against the bytes a C
// build of its layout produces (testdata/legacy_record.c).
func TestLegacyRecord(t *testing.T) {
	h, err := os.ReadFile("testdata/legacy-6.28.hex")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := hex.DecodeString(strings.Join(strings.Fields(string(h)), ""))
	if err != nil || len(rec) != LegacyLen {
		t.Fatalf("recorded record: %d bytes, %v", len(rec), err)
	}
	p, attr, err := ParseLegacy(rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := writeLat64(); p != want {
		t.Fatalf("ParseLegacy = %+v\nwant %+v", p, want)
	}
	if v := binary.LittleEndian.Uint32(attr[96:]); v != 0x1234 {
		t.Fatalf("vendor_id in the raw attributes: 0x%x", v)
	}
	enc, err := p.EncodeLegacy(LegacyLen, attr)
	if err != nil || !bytes.Equal(enc, rec) {
		t.Fatalf("EncodeLegacy differs from the recorded record:\n%x\n%x", enc, rec)
	}
	if short, _ := p.EncodeLegacy(LegacyLenNoMLX5DV, attr); !bytes.Equal(short, rec[:LegacyLenNoMLX5DV]) {
		t.Fatal("the record without mlx5dv is not the first 312 bytes")
	}
	if _, _, err := ParseLegacy(rec[:100]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short record: %v", err)
	}
}

func TestCompare(t *testing.T) {
	l, r := writeLat64(), writeLat64()
	r.Size, r.Verb, r.TestMethod, r.MaxQPRdAtom = 2, VerbSend, RunAll, 1
	var got []string
	for _, m := range Compare(l, r) {
		got = append(got, m.Error())
	}
	want := []string{"test_method mismatch: local=RUN_REGULAR, remote=RUN_ALL", "verb mismatch: local=WRITE, remote=SEND", "size mismatch: local=64, remote=2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Compare:\n%q\nwant\n%q", got, want)
	}
	if ClampOutReads(128, r) != 1 || ClampOutReads(1, Params{}) != 1 {
		t.Fatal("ClampOutReads")
	}
	r = l
	r.ConnectionType = 42
	if ms := Compare(l, r); len(ms) != 1 || ms[0].Remote != "42 (unknown)" {
		t.Fatalf("unknown enum: %v", ms)
	}
}

// pair runs server and client sides over a pipe-like TCP pair.
func pair(t *testing.T) (client, server *Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); ch <- c }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-ch
	t.Cleanup(func() { c.Close(); s.Close() })
	return &Conn{C: c, Client: true, Timeout: 5 * time.Second}, &Conn{C: s, Timeout: 5 * time.Second}
}

// TestExchange runs the whole exchange between two Conns for a 6.06
// peer, 6.28 and 6.29 peers (the negotiation record) and a peer newer
// than the drop-in knows, with a mismatch named on both sides.
func TestExchange(t *testing.T) {
	for _, ver := range []string{"6.06", "6.28", "6.29", "6.31"} {
		t.Run(ver, func(t *testing.T) {
			c, s := pair(t)
			done := make(chan error, 1)
			sp := writeLat64()
			sp.Size = 2
			go func() {
				done <- func() error {
					if _, err := s.Versions(ver); err != nil {
						return err
					}
					if sd, err := s.SysData(SysData{4096, 64}); err != nil || sd != (SysData{65536, 64}) {
						return errors.Join(err, errors.New("server sys data"))
					}
					if m, err := s.MTU(5); err != nil || m != 3 {
						return errors.Join(err, errors.New("server mtu"))
					}
					_, ok, err := s.Negotiate(sp)
					if ok != (ver != "6.06") || (ok && (err == nil || !strings.Contains(err.Error(), "size mismatch: local=2, remote=64"))) {
						return errors.Join(err, errors.New("server negotiation"))
					}
					d, err := s.Dest(Dest{QPN: 0x22, PSN: 2}, true, "dest qp 0")
					if err != nil || d.QPN != 0x11 {
						return errors.Join(err, errors.New("server dest"))
					}
					r, err := s.SwapBWReport(BWReport{})
					if err != nil || r.BWAvg != 12.5 || r.Iters != 1000 {
						return errors.Join(err, errors.New("server report"))
					}
					return nil
				}()
			}()
			if v, err := c.Versions(ver); err != nil || v.Raw != ver {
				t.Fatalf("client versions: %v %v", v, err)
			}
			if sd, err := c.SysData(SysData{65536, 64}); err != nil || sd != (SysData{65536, 64}) {
				t.Fatalf("client sys data %v %v", sd, err)
			}
			if m, err := c.MTU(3); err != nil || m != 3 {
				t.Fatalf("client mtu %d %v", m, err)
			}
			_, ok, err := c.Negotiate(writeLat64())
			if ok != (ver != "6.06") || (ok && (!errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "size mismatch: local=64, remote=2"))) {
				t.Fatalf("client negotiation: ok %v, %v", ok, err)
			}
			if d, err := c.Dest(Dest{QPN: 0x11, PSN: 1}, true, "dest qp 0"); err != nil || d.QPN != 0x22 {
				t.Fatalf("client dest %+v %v", d, err)
			}
			if _, err := c.SwapBWReport(BWReport{Size: 64, Iters: 1000, BWAvg: 12.5}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestExchangeDeadline: a peer that says nothing is an error naming the
// field, in time.
func TestExchangeDeadline(t *testing.T) {
	c, s := pair(t)
	_ = s
	c.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := c.Versions(OurVersion)
	var we *Error
	if !errors.As(err, &we) || !we.Timeout() || we.Field != "version" || we.Op != "read" || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	c2, s2 := pair(t)
	s2.C.Close()
	if _, err := c2.Versions(OurVersion); err == nil || !strings.Contains(err.Error(), "perftest exchange: version: read: the peer closed the connection after 0 of 16 bytes") {
		t.Fatalf("closed peer: %v", err)
	}
}

// TestNegotiateMixedVersions: each side decides on the other's version,
// and both pick the same form: none when either is older than 6.28, the
// record otherwise (a peer newer than 6.29 too).
func TestNegotiateMixedVersions(t *testing.T) {
	for _, tc := range []struct {
		client, server string
		ok             bool
	}{{"6.29", "6.06", false}, {"6.06", "6.29", false}, {"6.29", "6.28", true}, {"6.28", "6.29", true}, {"6.29", "6.31", true}, {"7.0", "6.29", true}} {
		t.Run(tc.client+"-"+tc.server, func(t *testing.T) {
			c, s := pair(t)
			done := make(chan error, 1)
			go func() {
				if _, err := s.Versions(tc.server); err != nil {
					done <- err
					return
				}
				_, ok, err := s.Negotiate(writeLat64())
				if ok != tc.ok {
					err = errors.Join(err, errors.New("server negotiated differently"))
				}
				done <- err
			}()
			if _, err := c.Versions(tc.client); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := c.Negotiate(writeLat64()); err != nil || ok != tc.ok {
				t.Fatalf("client: ok %v, %v", ok, err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNewerPeerNamed: against a perftest newer than 6.29, a step that
// fails names both versions; a record without max_qp_rd_atom is refused
// before it is sent.
func TestNewerPeerNamed(t *testing.T) {
	c, s := pair(t)
	go func() {
		b, _ := EncodeVersion("6.35")
		s.C.Write(b)
		s.C.Close()
	}()
	if _, err := c.Versions(OurVersion); err != nil {
		t.Fatal(err)
	}
	_, err := c.SysData(SysData{4096, 64})
	if err == nil || !strings.Contains(err.Error(), "perftest 6.35, newer than 6.29") {
		t.Fatalf("newer peer: %v", err)
	}
	p := writeLat64()
	p.MaxQPRdAtom = 0
	if _, err := p.EncodeLegacy(LegacyLen, nil); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "max_qp_rd_atom") {
		t.Fatalf("EncodeLegacy without max_qp_rd_atom: %v", err)
	}
}

// TestTestParams: the drop-in fills the record as perftest's parser does.
func TestTestParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Test
		want Params
	}{
		{"send_lat", Test{Verb: VerbSend, Lat: true, Size: 2, Iters: 1000, NumQPs: 1, MaxQPRdAtom: 128},
			Params{Verb: VerbSend, Tst: TstLat, AtomicType: CmpAndSwap, ReportFmt: ReportMiB, Size: 2, Iters: 1000, NumQPs: 1, Duration: 5, MaxQPRdAtom: 128}},
		{"atomic_bw", Test{Verb: VerbAtomic, Size: 8, Iters: 1000, NumQPs: 1, MaxQPRdAtom: 16},
			Params{Verb: VerbAtomic, Tst: TstBW, AtomicType: FetchAndAdd, ReportFmt: ReportMiB, Size: 8, Iters: 1000, NumQPs: 1, Duration: 5, MaxQPRdAtom: 16}},
		{"atomic_lat -A CMP_AND_SWAP", Test{Verb: VerbAtomic, Lat: true, CmpAndSwap: true, Size: 8, Iters: 1000, NumQPs: 1},
			Params{Verb: VerbAtomic, Tst: TstLat, AtomicType: CmpAndSwap, ReportFmt: ReportMiB, Size: 8, Iters: 1000, NumQPs: 1, Duration: 5}},
		{"write_bw -D 2 -R --report_gbits -c UC", Test{Verb: VerbWrite, Conn: ConnUC, Duration: 2, RDMACM: true, ReportGbits: true, Size: 65536, Iters: 5000, NumQPs: 2},
			Params{Verb: VerbWrite, ConnectionType: ConnUC, Tst: TstBW, TestType: DurationTest, ReportFmt: ReportGbits, Size: 65536, NumQPs: 2, Duration: 2, RDMACM: 1}},
		{"read_lat -a", Test{Verb: VerbRead, Lat: true, AllSizes: true, Size: 1 << 23, Iters: 5, NumQPs: 1},
			Params{TestMethod: RunAll, Verb: VerbRead, Tst: TstLat, ReportFmt: ReportMiB, Size: 1 << 23, Iters: 5, NumQPs: 1, Duration: 5}},
	} {
		if got := tc.in.Params(); got != tc.want {
			t.Errorf("%s: %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// TestNegotiateBuildSize: perftest's record is 320 bytes built with mlx5dv
// and 312 without. The drop-in's server answers either in its size; its
// client, which writes first, sends 320 and names a 312-byte server; a
// record of another size is refused by name.
func TestNegotiateBuildSize(t *testing.T) {
	defer func(d time.Duration) { negotiateTailWait = d }(negotiateTailWait)
	negotiateTailWait = 100 * time.Millisecond
	vb, _ := EncodeVersion("6.29")
	v629, _ := ParseVersion(vb)
	for _, tc := range []struct {
		name      string
		client    bool // the drop-in is the client; the test plays perftest's other end
		peerSize  int
		wantReply int    // bytes the drop-in sends
		wantErr   string // "": negotiated
	}{
		{"server, 320-byte client", false, LegacyLen, LegacyLen, ""},
		{"server, 312-byte client", false, LegacyLenNoMLX5DV, LegacyLenNoMLX5DV, ""},
		{"server, 316-byte client", false, 316, 0, "a record of 316 bytes: want 320 (perftest built with mlx5dv) or 312 (without)"},
		{"client, 320-byte server", true, LegacyLen, LegacyLen, ""},
		{"client, 312-byte server", true, LegacyLenNoMLX5DV, LegacyLen, "the server's record is 312 bytes, a perftest built without mlx5dv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := pair(t)
			ours, peer := s, c
			if tc.client {
				ours, peer = c, s
			}
			ours.Peer, ours.Ours = v629, v629
			full, err := writeLat64().EncodeLegacy(LegacyLen, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := full[:tc.peerSize] // the 312-byte record is the 320's without its comp mask
			got := make(chan []byte, 1)
			go func() { // perftest's end: the server reads its size first, the client writes first
				buf := make([]byte, LegacyLen)
				if tc.client {
					n, _ := io.ReadFull(peer.C, buf[:tc.peerSize])
					peer.C.Write(rec)
					got <- buf[:n]
					return
				}
				peer.C.Write(rec)
				peer.C.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, _ := io.ReadAtLeast(peer.C, buf, 1)
				got <- buf[:n]
			}()
			_, ok, err := ours.Negotiate(writeLat64())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ok %v, err %v; want an error naming %q", ok, err, tc.wantErr)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("ok %v, err %v", ok, err)
			}
			if b := <-got; !tc.client && len(b) != tc.wantReply {
				t.Errorf("the drop-in's server answered %d bytes, want %d", len(b), tc.wantReply)
			}
		})
	}
}
