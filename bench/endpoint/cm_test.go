package endpoint

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestCMPrivate(t *testing.T) {
	tok := [proto.CMTokenLen]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	good := CMPrivate{Index: 3, Count: 8, Token: tok}.Marshal()
	if len(good) != cmPrivateLen || cmPrivateLen > verbs.MaxPrivateData {
		t.Fatalf("marshal: %d bytes, want %d (at most %d)", len(good), cmPrivateLen, verbs.MaxPrivateData)
	}
	padded := append(append([]byte{}, good...), make([]byte, verbs.MaxPrivateData-len(good))...) // RC requests carry 56 bytes
	for _, tc := range []struct {
		name string
		in   []byte
		want CMPrivate
		err  string
	}{
		{"exact", good, CMPrivate{3, 8, tok}, ""},
		{"padded", padded, CMPrivate{3, 8, tok}, ""},
		{"short", good[:27], CMPrivate{}, "27 bytes, want at least 28"},
		{"empty", nil, CMPrivate{}, "0 bytes"},
		{"magic", append([]byte("RBX\x02"), good[4:]...), CMPrivate{}, "not an rdmabench client"},
		{"format 1", append([]byte("RBC\x01"), good[4:]...), CMPrivate{}, "not an rdmabench client of this version"},
		{"index", CMPrivate{Index: 8, Count: 8}.Marshal(), CMPrivate{}, "QP 8 of 8 out of range"},
		{"zero count", CMPrivate{Index: 0, Count: 0}.Marshal(), CMPrivate{}, "QP 0 of 0"},
		{"too many", CMPrivate{Index: 0, Count: maxCMQPs + 1}.Marshal(), CMPrivate{}, "at most 1088 QPs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCMPrivate(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parse: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parse: %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestCMToken: the listener takes only requests with its test's token.
func TestCMToken(t *testing.T) {
	l := &CMListener{Token: [proto.CMTokenLen]byte{9, 9, 9}}
	other := l.Token
	other[proto.CMTokenLen-1] ^= 1
	for _, tc := range []struct {
		name string
		in   []byte
		err  string
	}{
		{"the token", CMPrivate{Index: 0, Count: 1, Token: l.Token}.Marshal(), ""},
		{"another token", CMPrivate{Index: 0, Count: 1, Token: other}.Marshal(), "not this test's token"},
		{"no token", CMPrivate{Index: 0, Count: 1}.Marshal(), "not this test's token"},
		{"old format", []byte("RBC\x01\x00\x00\x00\x00\x00\x00\x00\x01"), "12 bytes"},
		{"garbage", []byte("GET / HTTP/1.1\r\n\r\n0123456789abcdef"), "not an rdmabench client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.checkToken(tc.in)
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("checkToken: %v, want %q", err, tc.err)
			}
		})
	}
	if _, err := CMTokenFrom(make([]byte, 15)); err == nil || !strings.Contains(err.Error(), "15 bytes, want 16") {
		t.Errorf("cmTokenFrom(15 bytes): %v", err)
	}
	if tok, err := CMTokenFrom(l.Token[:]); err != nil || tok != l.Token {
		t.Errorf("cmTokenFrom: %x %v", tok, err)
	}
}

// FuzzCMPrivate: the private data of a connect request comes from the
// network; parsing and the token check never panic, what parsing accepts
// round-trips, and only the listener's own token passes its check.
func FuzzCMPrivate(f *testing.F) {
	tok := [proto.CMTokenLen]byte{0xde, 0xad, 0xbe, 0xef}
	f.Add(CMPrivate{Index: 1, Count: 2, Token: tok}.Marshal())
	f.Add(CMPrivate{Index: 1, Count: 2}.Marshal())
	f.Add([]byte("RBC\x02\x00\x00\x00\x00\xff\xff\xff\xff0123456789abcdef"))
	f.Add([]byte("RBC\x01\x00\x00\x00\x00\x00\x00\x00\x02"))
	f.Add(make([]byte, 56))
	l := &CMListener{Token: tok}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseCMPrivate(b)
		terr := l.checkToken(b)
		if err != nil {
			if terr == nil {
				t.Fatalf("token check passed data parsing refused: %v", err)
			}
			return
		}
		if p.Index >= p.Count || p.Count > maxCMQPs {
			t.Fatalf("accepted %+v", p)
		}
		if !bytes.Equal(p.Marshal(), b[:cmPrivateLen]) {
			t.Fatalf("%+v does not round-trip %x", p, b[:cmPrivateLen])
		}
		if (terr == nil) != (p.Token == tok) {
			t.Fatalf("token %x: check %v", p.Token, terr)
		}
	})
}

func TestFirstAddress(t *testing.T) {
	ip := netip.MustParseAddr
	for _, tc := range []struct {
		name  string
		addrs []netip.Addr
		want  string
	}{
		{"rxe on lo", []netip.Addr{ip("fe80::200:ff:fe00:0"), ip("::ffff:127.0.0.1"), ip("::1")}, ""},
		{"ipv4 first", []netip.Addr{ip("fe80::1"), ip("2001:db8::5"), ip("::ffff:192.0.2.1")}, "192.0.2.1"},
		{"plain ipv4 (iWARP netdev)", []netip.Addr{ip("fe80::1"), ip("203.0.113.1")}, "203.0.113.1"},
		{"ipv6 only", []netip.Addr{ip("fe80::1"), ip("2001:db8::5")}, "2001:db8::5"},
		{"empty", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := firstAddress(tc.addrs)
			if got := ""; ok {
				got = a.String()
				if got != tc.want {
					t.Fatalf("firstAddress: %s, want %q", got, tc.want)
				}
			} else if tc.want != "" {
				t.Fatalf("firstAddress: none, want %s", tc.want)
			}
		})
	}
}

func TestCMAddressControlAddress(t *testing.T) {
	local := netip.MustParseAddr("10.1.2.3")
	a, dev, why, err := CMAddress("", local)
	if err != nil || a != local || dev != "" || !strings.Contains(why, "control connection") {
		t.Fatalf("cmAddress(10.1.2.3): %v %q %q %v", a, dev, why, err)
	}
}

func TestConnSetupSummary(t *testing.T) {
	eps := []*Endpoint{{setup: 3 * time.Millisecond}, {setup: time.Millisecond}, {setup: 2 * time.Millisecond}}
	c := NewConnSetup(result.ConnRDMACM, eps)
	if c.QPs != 3 || c.MaxNS != 3e6 || len(c.SetupNS) != 3 || c.SetupNS[1] != 1e6 {
		t.Fatalf("summary %+v", c)
	}
	if !c.P50NS.OK || c.P50NS.NS < 1999e3 || c.P50NS.NS > 2001e3 {
		t.Errorf("p50 %v, want 2 ms", c.P50NS)
	}
	one := NewConnSetup(result.ConnExchange, eps[:1])
	if one.P50NS.OK || one.MaxNS != 3e6 {
		t.Errorf("one QP: p50 %v (want n/a), max %d", one.P50NS, one.MaxNS)
	}
}

func TestRemoteAccessLeastPrivilege(t *testing.T) {
	for _, tc := range []struct {
		op, mode      string
		client, iwarp bool
		want          verbs.Access
	}{
		{result.OpWrite, result.ModeBW, true, false, 0},
		{result.OpWrite, result.ModeBW, false, false, verbs.AccessRemoteWrite},
		{result.OpWrite, result.ModeLat, true, false, verbs.AccessRemoteWrite},
		{result.OpRead, result.ModeBW, false, false, verbs.AccessRemoteRead},
		{result.OpRead, result.ModeBW, true, false, 0},
		{result.OpRead, result.ModeBW, true, true, verbs.AccessRemoteWrite}, // iWARP READ sink
		{result.OpSend, result.ModeLat, true, true, 0},
		{result.OpFetchAdd, result.ModeLat, false, false, verbs.AccessRemoteAtomic},
		// with immediate: WRITE's target only what a WRITE needs, SEND nothing
		{result.OpWriteImm, result.ModeBW, false, false, verbs.AccessRemoteWrite},
		{result.OpWriteImm, result.ModeBW, true, false, 0},
		{result.OpWriteImm, result.ModeLat, true, false, verbs.AccessRemoteWrite},
		{result.OpSendImm, result.ModeLat, true, false, 0},
		{result.OpSendImm, result.ModeBW, false, false, 0},
	} {
		if got := RemoteAccess(spec.Spec{Op: tc.op, Mode: tc.mode}, tc.client, tc.iwarp); got != tc.want {
			t.Errorf("%s %s client=%v iwarp=%v: %s, want %s", tc.op, tc.mode, tc.client, tc.iwarp, got, tc.want)
		}
	}
}

// TestCMNarrowsAccess: a connected rdma_cm QP's remote access is narrowed
// on RoCE and InfiniBand (least privilege at the QP), never on iWARP, where
// cxgb4 refuses an access change on a connected QP and the MR limits it.
func TestCMNarrowsAccess(t *testing.T) {
	for _, tt := range []struct {
		iwarp, want bool
	}{{false, true}, {true, false}} {
		if got := cmNarrowsAccess(tt.iwarp); got != tt.want {
			t.Errorf("iWARP %v: narrows %v, want %v", tt.iwarp, got, tt.want)
		}
	}
	// on iWARP the MR carries least privilege: only what the test needs
	for _, tt := range []struct {
		op     string
		client bool
		want   verbs.Access
	}{
		{result.OpWrite, false, verbs.AccessLocalWrite | verbs.AccessRemoteWrite},
		{result.OpRead, false, verbs.AccessLocalWrite | verbs.AccessRemoteRead},
		{result.OpRead, true, verbs.AccessLocalWrite | verbs.AccessRemoteWrite},
		{result.OpSend, false, verbs.AccessLocalWrite},
	} {
		s := spec.Spec{Op: tt.op, Mode: result.ModeBW, Size: 64}
		// relaxed ordering (requested by default, choices.go) grants the peer nothing
		if got := PoolConfig(s, tt.client, true, 1, false, false).Access &^ verbs.AccessRelaxedOrdering; got != tt.want {
			t.Errorf("iWARP %s client %v: MR access %s, want %s", tt.op, tt.client, got, tt.want)
		}
	}
}

// TestCMBinding: an rdma_cm side opens the port its CM ID bound to, not
// --ib-port (or its default, 1), unless --ib-dev names another device.
func TestCMBinding(t *testing.T) {
	for _, c := range []struct {
		name      string
		flagDev   string
		flagPort  int
		idDev     string
		idPort    int
		wantDev   string
		wantPort  int
		wantBound bool
	}{
		{"no flags, port 1", "", 0, "mlx5_0", 1, "mlx5_0", 1, true},
		{"no flags, second port", "", 0, "mlx5_0", 2, "mlx5_0", 2, true},
		{"--ib-port 1 left at its default, bound to port 2", "", 1, "mlx5_0", 2, "mlx5_0", 2, true},
		{"--ib-dev of the CM ID's device, --ib-port 1, bound to port 2", "mlx5_0", 1, "mlx5_0", 2, "mlx5_0", 2, true},
		{"--ib-port 2, bound to port 1", "", 2, "cxgb4_0", 1, "cxgb4_0", 1, true},
		{"--ib-dev of another device", "mlx5_1", 1, "mlx5_0", 2, "mlx5_1", 1, false},
	} {
		dev, port, bound := CMBinding(c.flagDev, c.flagPort, c.idDev, c.idPort)
		if dev != c.wantDev || port != c.wantPort || bound != c.wantBound {
			t.Errorf("%s: cmBinding(%q, %d, %q, %d) = %q, %d, %v; want %q, %d, %v", c.name, c.flagDev, c.flagPort, c.idDev, c.idPort,
				dev, port, bound, c.wantDev, c.wantPort, c.wantBound)
		}
	}
}
