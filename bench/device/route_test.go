package device

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestCheckEnds(t *testing.T) {
	gid := func(s string, typ verbs.GIDType) verbs.GIDEntry {
		return verbs.GIDEntry{Index: 1, GID: verbs.GID(netip.MustParseAddr(s).As16()), Type: typ}
	}
	lo := pairEnd{Device: "rxe0", Port: 1, LinkLayer: "Ethernet", GID: gid("::ffff:127.0.0.1", verbs.GIDTypeRoCEv2)}
	wire := pairEnd{Device: "rxe2", Port: 1, LinkLayer: "Ethernet", GID: gid("::ffff:198.51.100.1", verbs.GIDTypeRoCEv2)}
	peerWire := proto.QPInfo{Device: "rxe2", GID: "::ffff:198.51.100.2", GIDIndex: 1, GIDType: "RoCE v2", LinkLayer: "Ethernet"}
	tests := []struct {
		name   string
		end    pairEnd
		peer   proto.QPInfo
		remote bool
		want   string // "" = can talk
	}{
		{"same network", wire, peerWire, true, ""},
		{"loopback GID, remote peer", lo, peerWire, true, "a loopback GID reaches only its own host"},
		{"loopback GIDs, one host", lo, proto.QPInfo{Device: "rxe0", GID: "::ffff:127.0.0.1", GIDType: "RoCE v2", LinkLayer: "Ethernet"}, false, ""},
		{"peer loopback GID", wire, proto.QPInfo{Device: "rxe0", GID: "::ffff:127.0.0.1", GIDType: "RoCE v2", LinkLayer: "Ethernet"}, true, "loopback GID"},
		{"link layers", wire, proto.QPInfo{Device: "mlx5_0", GID: "fe80::1", GIDType: "IB", LinkLayer: "InfiniBand"}, true, "different link layers"},
		{"v4 against v6", wire, proto.QPInfo{Device: "rxe3", GID: "2001:db8::2", GIDType: "RoCE v2", LinkLayer: "Ethernet"}, true, "an IPv4 GID cannot reach an IPv6 GID"},
		{"v1 against v2", wire, proto.QPInfo{Device: "mlx5_1", GID: "::ffff:198.51.100.2", GIDType: "RoCE v1", LinkLayer: "Ethernet"}, true, "RoCE v1 and RoCE v2"},
		{"IB without GRH", pairEnd{Device: "mlx5_0", Port: 1, LinkLayer: "InfiniBand"}, proto.QPInfo{GID: "::", LinkLayer: "InfiniBand"}, true, ""},
	}
	for _, tc := range tests {
		err := checkEnds(tc.end, tc.peer, tc.remote, "client", "server")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		case tc.want != "" && (!strings.Contains(err.Error(), "client "+tc.end.Device) || !strings.Contains(err.Error(), "server "+tc.peer.Device)):
			t.Errorf("%s: %v does not name both ends", tc.name, err)
		}
	}
}
