package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The comparison of both ends (doctor HOST): facts that must agree across
// the fabric.

// peerChecks are the checks Compare reports, in order.
var peerChecks = []string{"peer-mtu", "peer-firmware", "peer-gid-types", "peer-link-speed"}

// Compare checks that the local and the peer's facts agree; peer names the
// peer in messages (its address).
func Compare(local, remote result.DoctorHost, peer string) []result.DoctorFinding {
	fns := []func(l, r result.DoctorHost, peer string) (string, string, string){compareMTU, compareFirmware, compareGIDTypes, compareLinkSpeed}
	out := make([]result.DoctorFinding, len(fns))
	for i, fn := range fns {
		st, detail, fix := fn(local, remote, peer)
		if st == pass {
			fix = ""
		}
		out[i] = result.DoctorFinding{Check: peerChecks[i], Status: st, Detail: detail, Fix: fix}
	}
	return out
}

// mtuOf describes one end's MTUs, e.g. "RoCE MTU 1024 (eth0 MTU 1500)".
func mtuOf(h result.DoctorHost) string {
	s := "active MTU " + orQ(h.ActiveMTU)
	if h.LinkLayer == "Ethernet" || h.LinkLayer == "" {
		s = "RoCE MTU " + orQ(h.ActiveMTU)
	}
	if h.Netdev != "" {
		s += fmt.Sprintf(" (%s MTU %s)", h.Netdev, orQ(h.NetdevMTU))
	}
	return s
}

func orQ(n int) string {
	if n == 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// compareMTU: the path runs at the smaller end's MTU, and an end whose
// netdev MTU is smaller than the other's drops the larger frames of any
// traffic that uses the other's.
func compareMTU(l, r result.DoctorHost, peer string) (string, string, string) {
	detail := fmt.Sprintf("%s here, %s at %s", mtuOf(l), mtuOf(r), peer)
	if l.ActiveMTU == 0 || r.ActiveMTU == 0 {
		return unknown, detail, "run doctor where both devices can be queried"
	}
	small := l
	if r.NetdevMTU < l.NetdevMTU {
		small = r
	}
	fix := "set the same MTU on both ends' netdevs (and the switch)"
	if big := max(l.NetdevMTU, r.NetdevMTU); small.NetdevMTU > 0 && big > small.NetdevMTU && small.Netdev != "" {
		fix = fmt.Sprintf("set the same MTU on both ends (and the switch): ip link set dev %s mtu %d on the end with %d", small.Netdev, big, small.NetdevMTU)
	}
	if l.ActiveMTU != r.ActiveMTU {
		return fail, detail + fmt.Sprintf(": the path runs at %d, and frames sized for the larger end are dropped at the smaller", min(l.ActiveMTU, r.ActiveMTU)), fix
	}
	if l.NetdevMTU == 0 || r.NetdevMTU == 0 {
		if l.LinkLayer == "InfiniBand" {
			return pass, detail, ""
		}
		return unknown, detail + ": a netdev MTU is not known", fix
	}
	if l.NetdevMTU != r.NetdevMTU && l.LinkLayer != "InfiniBand" {
		return warn, detail + ": the same RoCE MTU, but other traffic (TCP, the control connection) sees different netdev MTUs", fix
	}
	return pass, detail, ""
}

// compareFirmware: one NIC model on different firmware behaves and
// performs differently.
func compareFirmware(l, r result.DoctorHost, peer string) (string, string, string) {
	detail := fmt.Sprintf("%s firmware %q here, %s %q at %s", l.Device, l.Firmware, r.Device, r.Firmware, peer)
	switch {
	case l.Firmware == "" || r.Firmware == "":
		return unknown, detail + ": not reported (software RDMA reports none)", "compare fw_ver by hand: cat /sys/class/infiniband/*/fw_ver"
	case l.Firmware != r.Firmware:
		return warn, detail, "update both to the same firmware (mlxfwmanager, or the vendor's tool), or compare only like with like"
	}
	return pass, detail, ""
}

// compareGIDTypes: a RoCE v2 GID on one end only leaves the ends no GID
// type in common on a routed fabric.
func compareGIDTypes(l, r result.DoctorHost, peer string) (string, string, string) {
	detail := fmt.Sprintf("GID types [%s] here, [%s] at %s", strings.Join(l.GIDTypes, ", "), strings.Join(r.GIDTypes, ", "), peer)
	switch {
	case len(l.GIDTypes) == 0 || len(r.GIDTypes) == 0:
		return unknown, detail + ": not readable (iWARP and InfiniBand have no GID types)", "cat /sys/class/infiniband/DEV/ports/1/gid_attrs/types/*"
	case slices.Contains(l.GIDTypes, "RoCE v2") != slices.Contains(r.GIDTypes, "RoCE v2"):
		return fail, detail + ": RoCE v2 on one end only", "enable RoCE v2 on both ends (an IP address on the netdev; cma_roce_mode in configfs)"
	case !slices.Equal(l.GIDTypes, r.GIDTypes):
		return warn, detail, "give both ends the same RoCE modes"
	}
	return pass, detail, ""
}

// compareLinkSpeed: the slower end (port rate or PCIe link) bounds the
// bandwidth of every test.
func compareLinkSpeed(l, r result.DoctorHost, peer string) (string, string, string) {
	link := func(h result.DoctorHost) string {
		s := "rate " + orUnknownStr(h.Rate)
		if h.PCIeSpeed != "" {
			s += fmt.Sprintf(", PCIe %s x%s", h.PCIeSpeed, h.PCIeWidth)
		}
		return s
	}
	detail := fmt.Sprintf("%s here, %s at %s", link(l), link(r), peer)
	switch {
	case l.Rate == "" || r.Rate == "":
		return unknown, detail, "cat /sys/class/infiniband/DEV/ports/1/rate on both ends"
	case l.Rate != r.Rate:
		return warn, detail + ": the slower end bounds the bandwidth", "run both ends at the same link speed (ethtool -s NETDEV speed ...; the cable and the switch port)"
	case l.PCIeSpeed != "" && r.PCIeSpeed != "" && (l.PCIeSpeed != r.PCIeSpeed || l.PCIeWidth != r.PCIeWidth):
		return warn, detail + ": the PCIe links differ", "check both ends' pcie-link findings"
	}
	return pass, detail, ""
}

func orUnknownStr(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// PairRails compares each of this host's ports (local, in rail order) with
// the peer's port on the same rail, where rails can be told: the peer gave
// its ports (remote, in its rail order) and has as many as this host.
// Otherwise only this host's port by route (routed) is compared, with the
// peer's port by route (peer, with its findings peerFindings). Each
// compared port gets the peer's port, its findings and the comparison
// (added to its Findings). addr names the peer in messages. It returns how
// the ports were paired, for the report.
func PairRails(local, remote []result.DoctorPort, routed, peer result.DoctorHost, peerFindings []result.DoctorFinding, addr string) string {
	if len(remote) > 0 && len(remote) == len(local) {
		for i := range local {
			r := remote[i].Local
			local[i].Peer, local[i].PeerFindings = &r, remote[i].Findings
			local[i].Findings = append(local[i].Findings, Compare(local[i].Local, r, addr)...)
		}
		return fmt.Sprintf("rail by rail: port i here with port i at %s (%d ports each)", addr, len(local))
	}
	why := "the server gave no ports (an older rdmabench)"
	if len(remote) > 0 {
		why = fmt.Sprintf("%d ports here, %d at %s: rails cannot be told", len(local), len(remote), addr)
	}
	for i := range local {
		if routed.Device != "" && local[i].Local.Device == routed.Device && local[i].Local.Port == routed.Port {
			p := peer
			local[i].Peer, local[i].PeerFindings = &p, peerFindings
			local[i].Findings = append(local[i].Findings, Compare(local[i].Local, p, addr)...)
		}
	}
	return fmt.Sprintf("by route: %s port %d here with %s port %d at %s (%s)", routed.Device, routed.Port, peer.Device, peer.Port, addr, why)
}
