package device

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/verbs"
)

// sysfsRoot is where sysfs is mounted (a variable for tests, which build a
// fake tree).
var sysfsRoot = "/sys"

// Choosing the device by route: with no -d, each side takes the device and
// port whose GID table holds the address its end of the control connection
// uses. On a host with several NICs (or rxe on lo beside rxe on eth0) the
// first device is often the wrong one: its GID cannot reach the peer.

// ForAddress names the active device port that carries local, and
// why (choosePort). ok is false when no active port carries it; the
// caller then takes the first active port (Choose).
func ForAddress(local netip.Addr) (name string, port int, reason string, ok bool, err error) {
	ports, err := devicePorts()
	if err != nil {
		return "", 0, "", false, err
	}
	c, err := choosePort(ports, local, hostIfaces(), sysfsRoot)
	if err != nil {
		return "", 0, "", false, err
	}
	return c.Device, c.Port, c.Reason, c.ByRoute, nil
}

// Choose returns the device name and port to open for a control
// connection whose local end is local: name and port as given with -d and
// -i (which fails later, clearly, when that port is not active); with -d
// alone (port 0) the port of that device that carries local, else its
// first active port; with -i alone, the same among the ports numbered
// port (none: the chosen device with that port, which fails clearly when
// opened); with neither, the active port of any device that carries local
// (by route), else the first active port. The reason is
// shown with the device. With no active port to take the error wraps
// ErrPortNotActive and lists the ports' states.
func Choose(name string, port int, local netip.Addr) (string, int, string, error) {
	if name != "" && port > 0 {
		return name, port, "chosen with --ib-dev", nil
	}
	ports, err := devicePorts()
	if err != nil {
		return "", 0, "", err
	}
	if name != "" {
		ports = slices.DeleteFunc(ports, func(p portView) bool { return p.Device != name })
		if len(ports) == 0 { // not a device: Open names the ones there are
			return name, 0, "chosen with --ib-dev", nil
		}
	}
	if port > 0 { // -i alone: the devices that have that port
		same := slices.DeleteFunc(slices.Clone(ports), func(p portView) bool { return p.Port != port })
		if len(same) == 0 { // none has it: opening the chosen device names its ports
			c, err := choosePort(ports, local, hostIfaces(), sysfsRoot)
			if err != nil {
				return "", 0, "", err
			}
			return c.Device, port, "chosen with --ib-port", nil
		}
		ports = same
	}
	c, err := choosePort(ports, local, hostIfaces(), sysfsRoot)
	if err != nil {
		if name != "" {
			return "", 0, "", fmt.Errorf("--ib-dev %s: %w", name, err)
		}
		return "", 0, "", err
	}
	if name != "" {
		return c.Device, c.Port, "chosen with --ib-dev; port " + strconv.Itoa(c.Port) + ": " + c.Reason, nil
	}
	return c.Device, c.Port, c.Reason, nil
}

// portView is one device port as the choice of a device sees it.
type portView struct {
	Device string
	Port   int
	State  string // e.g. "PORT_ACTIVE"
	Active bool
	GIDs   []verbs.GIDEntry
	// Addrs are the IP addresses the port answers on (Addrs): its IP
	// GIDs, or for iWARP its netdev's addresses.
	Addrs []netip.Addr
}

func (p portView) String() string { return fmt.Sprintf("%s port %d", p.Device, p.Port) }

// netIface is one of the host's network interfaces and its addresses.
type netIface struct {
	Name  string
	Addrs []netip.Addr
}

// portChoice is the device port choosePort took, and why.
type portChoice struct {
	Device string
	Port   int
	Reason string
	// ByRoute: the port carries the control address (not the first active
	// port taken for want of one).
	ByRoute bool
}

// choosePort picks, among ports (in device and port order), the active
// port that carries the control connection's local address local: its
// GID table (RoCE) or its netdev (iWARP) holds local; or the netdev that
// carries local in ifaces lies, through sysfs at root, on that device
// port (InfiniBand's IPoIB, hardware NICs, an upper netdev such as a VLAN
// through its lower links); or its GIDs are on that netdev or one beneath
// it (rxe). Failing that it takes the first active port. Ports that are
// not active are skipped, and the reason names them. With no active port
// the error wraps ErrPortNotActive.
func choosePort(ports []portView, local netip.Addr, ifaces []netIface, root string) (portChoice, error) {
	want := local.Unmap()
	var carrier string
	if want.IsValid() {
		for _, ifc := range ifaces {
			if slices.ContainsFunc(ifc.Addrs, func(a netip.Addr) bool { return a.Unmap() == want }) {
				carrier = ifc.Name
				break
			}
		}
	}
	var sysDev, sysVia string
	var sysPort int
	var sysOK bool
	var carriers []string
	if carrier != "" {
		sysDev, sysPort, sysVia, sysOK = hostenv.NetdevPort(root, carrier)
		carriers = append([]string{carrier}, hostenv.LowerNetdevs(root, carrier)...)
	}
	// match says how strongly p carries local (3: its addresses hold it;
	// 2: sysfs puts the carrying netdev on p; 1: p's GIDs are on that
	// netdev; 0: not at all) and how.
	match := func(p portView) (int, string) {
		switch {
		case want.IsValid() && slices.ContainsFunc(p.Addrs, func(a netip.Addr) bool { return a.Unmap() == want }):
			return 3, fmt.Sprintf("holds %s", want)
		case sysOK && sysDev == p.Device && sysPort == p.Port:
			if sysVia != carrier {
				return 2, fmt.Sprintf("lies under netdev %s (through %s), which carries %s", carrier, sysVia, want)
			}
			return 2, fmt.Sprintf("lies under netdev %s, which carries %s", carrier, want)
		case carrier != "" && slices.ContainsFunc(p.GIDs, func(g verbs.GIDEntry) bool { return g.Netdev != "" && slices.Contains(carriers, g.Netdev) }):
			return 1, fmt.Sprintf("has GIDs on netdev %s, which carries %s", strings.Join(carriers, " over "), want)
		}
		return 0, ""
	}
	var downMatch, skipped []string
	best, bestRank, bestWhy := -1, 0, ""
	for i, p := range ports {
		rank, why := match(p)
		switch {
		case rank > bestRank && p.Active:
			best, bestRank, bestWhy = i, rank, why
		case rank > 0 && !p.Active:
			downMatch = append(downMatch, fmt.Sprintf("%s %s but is %s", p, why, p.State))
		}
	}
	if best >= 0 {
		p := ports[best]
		return portChoice{Device: p.Device, Port: p.Port, ByRoute: true,
			Reason: fmt.Sprintf("by route: %s %s, this side's control connection address", p, bestWhy)}, nil
	}
	for _, p := range ports {
		if !p.Active {
			skipped = append(skipped, fmt.Sprintf("%s is %s", p, p.State))
			continue
		}
		why := fmt.Sprintf("the first active port, %s", p)
		if want.IsValid() {
			why += fmt.Sprintf(": no active port carries %s (in its GID table or its netdev)", want)
		}
		if len(downMatch) > 0 {
			why += "; " + strings.Join(downMatch, "; ")
		}
		if len(skipped) > 0 {
			why += "; skipped " + strings.Join(skipped, ", ")
		}
		return portChoice{Device: p.Device, Port: p.Port, Reason: why}, nil
	}
	if len(ports) == 0 {
		return portChoice{}, fmt.Errorf("%w: no RDMA device port could be opened", ErrPortNotActive)
	}
	return portChoice{}, fmt.Errorf("%w: no RDMA port is active (%s); bring a port's link up (on InfiniBand, start a subnet manager)",
		ErrPortNotActive, strings.Join(skipped, ", "))
}

// devicePorts opens every device (in name order) and describes each of its
// ports for choosePort. A device that does not open is left out.
func devicePorts() ([]portView, error) {
	names, err := verbs.DeviceNames()
	if err != nil {
		return nil, err
	}
	var out []portView
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
			pa, err := ctx.QueryPort(p)
			if err != nil {
				continue
			}
			v := portView{Device: n, Port: p, State: pa.State, Active: pa.Active}
			v.GIDs, _ = ctx.GIDTable(p)
			v.Addrs = tableAddrs(ctx, v.GIDs)
			out = append(out, v)
		}
		ctx.Close()
	}
	return out, nil
}

// hostIfaces lists the host's network interfaces and their addresses.
func hostIfaces() []netIface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := make([]netIface, 0, len(ifs))
	for i := range ifs {
		out = append(out, netIface{Name: ifs[i].Name, Addrs: interfaceAddrs(&ifs[i])})
	}
	return out
}

// CheckPair refuses, before any traffic, a peer that d's QPs cannot talk
// to, naming both ends (self and other are the roles, "client" or
// "server"): a loopback GID against a peer on another host (remote), or the
// reverse; different link layers; an IPv4-mapped GID against an IPv6 one;
// RoCE v1 against RoCE v2.
func CheckPair(d *Device, peer proto.QPInfo, remote bool, self, other string) error {
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

// IsLocalAddr reports whether a is a loopback address or one of this host's
// interface addresses: a peer there shares this host's devices.
func IsLocalAddr(a netip.Addr) bool {
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

// Addrs lists the IP addresses a device's port answers on: the IP
// GIDs of its GID table (RoCE), or, for iWARP, whose GIDs are derived from
// the MAC, the addresses of the netdev with that MAC.
func Addrs(ctx *verbs.Context, port int) ([]netip.Addr, error) {
	tbl, err := ctx.GIDTable(port)
	if err != nil {
		return nil, err
	}
	return tableAddrs(ctx, tbl), nil
}

// tableAddrs is Addrs for the port's GID table tbl.
func tableAddrs(ctx *verbs.Context, tbl []verbs.GIDEntry) []netip.Addr {
	if ctx.IsIWARP() {
		if len(tbl) == 0 {
			return nil
		}
		ifc := NetdevOfGID(tbl[0].GID)
		if ifc == nil {
			return nil
		}
		return interfaceAddrs(ifc)
	}
	var out []netip.Addr
	for _, g := range tbl {
		out = append(out, netip.AddrFrom16(g.GID))
	}
	return out
}

// NetdevOfGID is the network interface whose MAC address an iWARP GID
// carries in its first six bytes (siw, cxgb4, irdma), or nil.
func NetdevOfGID(g verbs.GID) *net.Interface {
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
