package bench

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/verbs"
)

func TestCMPrivate(t *testing.T) {
	good := cmPrivate{Index: 3, Count: 8}.marshal()
	if len(good) != cmPrivateLen {
		t.Fatalf("marshal: %d bytes, want %d", len(good), cmPrivateLen)
	}
	padded := append(append([]byte{}, good...), make([]byte, 56-len(good))...) // RC requests carry 56 bytes
	for _, tc := range []struct {
		name string
		in   []byte
		want cmPrivate
		err  string
	}{
		{"exact", good, cmPrivate{3, 8}, ""},
		{"padded", padded, cmPrivate{3, 8}, ""},
		{"short", good[:11], cmPrivate{}, "11 bytes, want at least 12"},
		{"empty", nil, cmPrivate{}, "0 bytes"},
		{"magic", append([]byte("RBX\x01"), good[4:]...), cmPrivate{}, "not an rdmabench client"},
		{"index", cmPrivate{Index: 8, Count: 8}.marshal(), cmPrivate{}, "QP 8 of 8 out of range"},
		{"zero count", cmPrivate{Index: 0, Count: 0}.marshal(), cmPrivate{}, "QP 0 of 0"},
		{"too many", cmPrivate{Index: 0, Count: maxCMQPs + 1}.marshal(), cmPrivate{}, "at most 128 QPs"},
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

// FuzzCMPrivate: the private data of a connect request comes from the
// network; parsing never panics and what it accepts round-trips.
func FuzzCMPrivate(f *testing.F) {
	f.Add(cmPrivate{Index: 1, Count: 2}.marshal())
	f.Add([]byte("RBC\x01\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Add(make([]byte, 56))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseCMPrivate(b)
		if err != nil {
			return
		}
		if p.Index >= p.Count || p.Count > maxCMQPs {
			t.Fatalf("accepted %+v", p)
		}
		if !bytes.Equal(p.marshal(), b[:cmPrivateLen]) {
			t.Fatalf("%+v does not round-trip %x", p, b[:cmPrivateLen])
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
	a, dev, why, err := cmAddress("", 1, local)
	if err != nil || a != local || dev != "" || !strings.Contains(why, "control connection") {
		t.Fatalf("cmAddress(10.1.2.3): %v %q %q %v", a, dev, why, err)
	}
}

func TestConnSetupSummary(t *testing.T) {
	eps := []*endpoint{{setup: 3 * time.Millisecond}, {setup: time.Millisecond}, {setup: 2 * time.Millisecond}}
	c := newConnSetup(result.ConnRDMACM, eps)
	if c.QPs != 3 || c.MaxNS != 3e6 || len(c.SetupNS) != 3 || c.SetupNS[1] != 1e6 {
		t.Fatalf("summary %+v", c)
	}
	if !c.P50NS.OK || c.P50NS.NS < 1999e3 || c.P50NS.NS > 2001e3 {
		t.Errorf("p50 %v, want 2 ms", c.P50NS)
	}
	one := newConnSetup(result.ConnExchange, eps[:1])
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
	} {
		if got := remoteAccess(Spec{Op: tc.op, Mode: tc.mode}, tc.client, tc.iwarp); got != tc.want {
			t.Errorf("%s %s client=%v iwarp=%v: %s, want %s", tc.op, tc.mode, tc.client, tc.iwarp, got, tc.want)
		}
	}
}
