package bench

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

// Choosing the device by route: with no -d, each side takes the device and
// port whose GID table holds the address its end of the control connection
// uses. On a host with several NICs (or rxe on lo beside rxe on eth0) the
// first device is often the wrong one: its GID cannot reach the peer.

// DeviceForAddress names the device and port whose GID table holds local
// (as an IPv4-mapped or IPv6 GID), and why. With several candidates the
// RoCE v2 GID wins (BestGID). ok is false when no device holds local; the
// caller then falls back to the first device and says so.
func DeviceForAddress(local netip.Addr) (name string, port int, reason string, ok bool, err error) {
	names, err := verbs.DeviceNames()
	if err != nil {
		return "", 0, "", false, err
	}
	want := local.Unmap()
	for _, n := range names {
		ctx, err := verbs.Open(n)
		if err != nil {
			continue
		}
		attr, err := ctx.QueryDevice()
		if err != nil {
			ctx.Close()
			continue
		}
		for p := 1; p <= max(attr.PhysPortCnt, 1); p++ {
			addrs, err := deviceAddrs(ctx, p)
			if err != nil {
				continue
			}
			for _, a := range addrs {
				if a.Unmap() == want {
					ctx.Close()
					return n, p, fmt.Sprintf("by route: %s port %d holds %s, this side's control connection address", n, p, want), true, nil
				}
			}
		}
		ctx.Close()
	}
	return "", 0, "", false, nil
}

// chooseDevice returns the device name and port to open for a control
// connection whose local end is local: name and port as given with -d, else
// the device by route, else the first device. The reason is shown with the
// device.
func chooseDevice(name string, port int, local netip.Addr) (string, int, string, error) {
	if name != "" {
		return name, port, "chosen with --ib-dev", nil
	}
	if !local.IsValid() {
		return "", port, "the first device (no control address to route by)", nil
	}
	n, p, why, ok, err := DeviceForAddress(local)
	if err != nil {
		return "", 0, "", err
	}
	if !ok {
		return "", port, fmt.Sprintf("the first device: no device's GID table holds %s", local.Unmap()), nil
	}
	return n, p, why, nil
}

// checkPair refuses, before any traffic, a peer that d's QPs cannot talk
// to, naming both ends (self and other are the roles, "client" or
// "server"): a loopback GID against a peer on another host (remote), or the
// reverse; different link layers; an IPv4-mapped GID against an IPv6 one;
// RoCE v1 against RoCE v2.
func checkPair(d *Device, peer proto.QPInfo, remote bool, self, other string) error {
	return checkEnds(pairEnd{Device: d.Ctx.Name(), Port: d.Port.Port, LinkLayer: d.Port.LinkLayer, GID: d.GID}, peer, remote, self, other)
}

// pairEnd is this side of a pair as checkEnds sees it.
type pairEnd struct {
	Device    string
	Port      int
	LinkLayer string
	GID       verbs.GIDEntry
}

func checkEnds(e pairEnd, peer proto.QPInfo, remote bool, self, other string) error {
	fail := func(why string) error {
		dev := peer.Device
		if dev == "" {
			dev = "?"
		}
		return fmt.Errorf("these ends cannot talk (%s): %s %s port %d GID %d %s (%s, %s) against %s %s GID %d %s (%s, %s); "+
			"choose devices that share a network with -d on both sides, or leave -d out to choose by route",
			why, self, e.Device, e.Port, e.GID.Index, netip.AddrFrom16(e.GID.GID), e.GID.Type, e.LinkLayer,
			other, dev, peer.GIDIndex, peer.GID, peer.GIDType, peer.LinkLayer)
	}
	if peer.LinkLayer != "" && e.LinkLayer != "" && peer.LinkLayer != e.LinkLayer {
		return fail("different link layers")
	}
	pg, err := netip.ParseAddr(peer.GID)
	if peer.GID == "" || e.GID.GID.IsZero() || (err == nil && pg.IsUnspecified()) { // InfiniBand without GRH: LIDs only
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s's GID %q: %w", other, peer.GID, err)
	}
	lg := netip.AddrFrom16(e.GID.GID)
	switch {
	case remote && (lg.Unmap().IsLoopback() || pg.Unmap().IsLoopback()):
		return fail("a loopback GID reaches only its own host, and the peer is on another host")
	case lg.Is4In6() != pg.Is4In6():
		return fail("an IPv4 GID cannot reach an IPv6 GID")
	case peer.GIDType != "" && peer.GIDType != e.GID.Type.String() && isRoCE(peer.GIDType) && isRoCE(e.GID.Type.String()):
		return fail("RoCE v1 and RoCE v2 do not interoperate")
	}
	return nil
}

func isRoCE(t string) bool { return strings.HasPrefix(t, "RoCE") }

// isLocalAddr reports whether a is a loopback address or one of this host's
// interface addresses: a peer there shares this host's devices.
func isLocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// deviceAddrs lists the IP addresses a device's port answers on: the IP
// GIDs of its GID table (RoCE), or, for iWARP, whose GIDs are derived from
// the MAC, the addresses of the netdev with that MAC.
func deviceAddrs(ctx *verbs.Context, port int) ([]netip.Addr, error) {
	tbl, err := ctx.GIDTable(port)
	if err != nil {
		return nil, err
	}
	if ctx.IsIWARP() {
		if len(tbl) == 0 {
			return nil, nil
		}
		ifc := netdevOfGID(tbl[0].GID)
		if ifc == nil {
			return nil, nil
		}
		return interfaceAddrs(ifc), nil
	}
	var out []netip.Addr
	for _, g := range tbl {
		out = append(out, netip.AddrFrom16(g.GID))
	}
	return out, nil
}

// netdevOfGID is the network interface whose MAC address an iWARP GID
// carries in its first six bytes (siw, cxgb4, irdma), or nil.
func netdevOfGID(g verbs.GID) *net.Interface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for i := range ifs {
		if hw := ifs[i].HardwareAddr; len(hw) == 6 && string(hw) == string(g[:6]) {
			return &ifs[i]
		}
	}
	return nil
}

// interfaceAddrs lists ifc's IP addresses.
func interfaceAddrs(ifc *net.Interface) []netip.Addr {
	as, err := ifc.Addrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}
