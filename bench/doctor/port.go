package doctor

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The port's own checks: its state, its MTU against the netdev's, and a
// RoCE v2 GID for each address on the netdev.

const (
	pass    = result.DoctorPass
	warn    = result.DoctorWarn
	fail    = result.DoctorFail
	unknown = result.DoctorUnknown
)

// checkPortState: ports/N/state must be ACTIVE and phys_state LinkUp.
func checkPortState(h *host) (string, string, string) {
	if h.devDir == "" {
		return unknown, noDevice, "rdmabench devices lists the devices"
	}
	st, ok1 := read(filepath.Join(h.portDir, "state"))
	ph, ok2 := read(filepath.Join(h.portDir, "phys_state"))
	if !ok1 || !ok2 {
		return unknown, fmt.Sprintf("%s: state or phys_state not readable in %s", h.devWhat(), h.portDir), "check the device and port: rdmabench devices"
	}
	// "4: ACTIVE", "5: LinkUp"
	detail := fmt.Sprintf("%s: state %s, phys_state %s", h.devWhat(), st, ph)
	if strings.HasSuffix(st, "ACTIVE") && strings.HasSuffix(ph, "LinkUp") {
		return pass, detail, ""
	}
	fix := "bring the link up (ip link set dev NETDEV up; the cable, the switch port)"
	if h.facts.LinkLayer == "InfiniBand" && strings.HasSuffix(ph, "LinkUp") {
		fix = "an InfiniBand port that is up but not ACTIVE has no subnet manager: start opensm (or the switch's SM)"
	} else if h.facts.Netdev != "" {
		fix = "bring the link up: ip link set dev " + h.facts.Netdev + " up; then check the cable and the switch port"
	}
	return fail, detail, fix
}

// roceHeaders is the largest RoCE v2 header a data packet carries on top
// of the RoCE MTU, bytes: IPv6 40, UDP 8, BTH 12, RETH 16, ImmDt 4, ICRC 4.
const roceHeaders = 84

// ibMTUs are the MTUs a RoCE or IB port can run, bytes.
var ibMTUs = []int{256, 512, 1024, 2048, 4096}

// checkMTU: a RoCE port's active MTU plus the headers must fit the
// netdev's MTU, or its full-size packets are dropped.
func checkMTU(h *host) (string, string, string) {
	if st, detail, fix, done := h.roceOnly("no RoCE MTU under a netdev"); done {
		return st, detail, fix
	}
	switch {
	case h.facts.ActiveMTU == 0:
		return unknown, h.devWhat() + ": active MTU not known (the device could not be queried)", "run doctor where the device can be opened"
	case h.facts.NetdevMTU == 0:
		return unknown, h.devWhat() + ": the netdev under the port or its MTU is not known", "name the device whose netdev carries the traffic: -d"
	}
	a, n := h.facts.ActiveMTU, h.facts.NetdevMTU
	detail := fmt.Sprintf("%s: RoCE MTU %d, %s MTU %d", h.devWhat(), a, h.facts.Netdev, n)
	if n < a+roceHeaders {
		return fail, detail + fmt.Sprintf(": a full RoCE packet needs %d (MTU + %d bytes of headers)", a+roceHeaders, roceHeaders),
			fmt.Sprintf("ip link set dev %s mtu %d (or 9000), the same on both ends and the switch", h.facts.Netdev, a+roceHeaders)
	}
	best := 0
	for _, m := range ibMTUs {
		if m+roceHeaders <= n {
			best = m
		}
	}
	if m := h.in.MaxMTU; m > a && best < m {
		need := NetdevMTUFor(m)
		return warn, detail + fmt.Sprintf(": the port can run RoCE MTU %d, but %s's MTU %d holds only %d", m, h.facts.Netdev, n, a),
			fmt.Sprintf("set %s MTU ≥ %d (jumbo frames) for a RoCE MTU of %d: ip link set dev %s mtu %d (or 9000), the same on both ends and the switch", h.facts.Netdev, need, m, h.facts.Netdev, need)
	}
	if best > a {
		detail += fmt.Sprintf(" (the netdev would carry RoCE MTU %d; the path MTU is the smaller end's)", best)
	}
	return pass, detail, ""
}

// iboeHeaders is what the kernel takes off a RoCE netdev's MTU for the
// port's active MTU (iboe_get_mtu, hardware RoCE such as mlx5), bytes: GRH
// 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4. rxe takes 80.
const iboeHeaders = 96

// NetdevMTUFor is the netdev MTU, bytes, that a RoCE port needs for RoCE
// MTU roce (bytes): roce plus the kernel's headers, rounded up to a
// multiple of 100 (4096 → 4200, NVIDIA's and perftest's figure).
func NetdevMTUFor(roce int) int {
	return (roce + iboeHeaders + 99) / 100 * 100
}

// roceOnly is the verdict of a RoCE check on a port it does not apply to
// (why says what the port lacks), or that cannot tell: done is then true.
func (h *host) roceOnly(why string) (st, detail, fix string, done bool) {
	if h.devDir == "" {
		return unknown, noDevice, "rdmabench devices lists the devices", true
	}
	switch roce, known := h.isRoCE(); {
	case !known:
		return unknown, h.devWhat() + ": link layer not readable", "check the device and port: rdmabench devices", true
	case !roce:
		return pass, fmt.Sprintf("not applicable: %s is %s, not RoCE (%s)", h.devWhat(), h.transport(), why), "", true
	}
	return "", "", "", false
}

// transport names the port's kind for messages.
func (h *host) transport() string {
	if h.iwarp {
		return "iWARP"
	}
	return h.facts.LinkLayer
}

// checkRoCEGID: every IP address on a RoCE port's netdev needs a RoCE v2
// GID, or a peer on that address cannot be reached over RoCE v2.
func checkRoCEGID(h *host) (string, string, string) {
	if st, detail, fix, done := h.roceOnly("no RoCE v2 GIDs"); done {
		return st, detail, fix
	}
	if h.facts.Netdev == "" {
		return unknown, h.devWhat() + ": the netdev under the port is not known", "name the device whose netdev carries the traffic: -d"
	}
	addrs, err := h.in.Addrs(h.facts.Netdev)
	if err != nil {
		return unknown, fmt.Sprintf("addresses of %s: %v", h.facts.Netdev, err), "ip addr show " + h.facts.Netdev
	}
	if len(addrs) == 0 {
		return fail, fmt.Sprintf("%s has no IP address: RoCE v2 GIDs come from the netdev's addresses", h.facts.Netdev),
			"ip addr add ADDR/LEN dev " + h.facts.Netdev
	}
	var missing, have []string
	for _, a := range addrs {
		want := a
		if a.Is4() {
			want = netip.AddrFrom16(a.As16()) // ::ffff:a.b.c.d
		}
		found := false
		for _, g := range h.gids {
			if g.gid == want && g.typ == "RoCE v2" && (g.ndev == "" || g.ndev == h.facts.Netdev) {
				found = true
				have = append(have, fmt.Sprintf("%s (GID %d)", a, g.index))
				break
			}
		}
		if !found {
			missing = append(missing, a.String())
		}
	}
	if len(missing) > 0 {
		return fail, fmt.Sprintf("%s: no RoCE v2 GID for %s on %s", h.devWhat(), strings.Join(missing, ", "), h.facts.Netdev),
			"check that the address is on the netdev the device runs over, and that RoCE v2 is enabled (cma_roce_mode; a VLAN netdev has GIDs of its own)"
	}
	return pass, fmt.Sprintf("%s: RoCE v2 GIDs for %s", h.devWhat(), strings.Join(have, ", ")), ""
}
