package doctor

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// host is what gather found: the facts both ends compare and the paths
// the checks read.
type host struct {
	in    Input
	facts result.DoctorHost
	// devDir is sys/class/infiniband/DEV ("" without a device), portDir
	// its ports/N, netDir sys/class/net/NETDEV ("" when unknown), pciDir
	// the device's PCI function in sys/devices ("" for software devices).
	devDir, portDir, netDir, pciDir string
	iwarp                           bool // node_type RNIC
	gids                            []gidEntry
}

// gidEntry is one populated GID of the port.
type gidEntry struct {
	index int
	gid   netip.Addr
	typ   string // gid_attrs/types: "RoCE v2", "IB/RoCE v1"; "" unreadable
	ndev  string // gid_attrs/ndevs
}

// path joins elem under the root.
func (h *host) path(elem ...string) string {
	return filepath.Join(append([]string{h.in.Root}, elem...)...)
}

// read returns the trimmed content of file p, and whether it was read.
func read(p string) (string, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// readInt reads a decimal number from file p.
func readInt(p string) (int, bool) {
	s, ok := read(p)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func gather(in Input) *host {
	h := &host{in: in}
	h.facts = result.DoctorHost{Host: in.Host, Device: in.Device, ActiveMTU: in.ActiveMTU}
	if in.Device != "" {
		h.facts.Port = in.Port
		h.devDir = h.path("sys/class/infiniband", in.Device)
		h.portDir = filepath.Join(h.devDir, "ports", strconv.Itoa(in.Port))
		h.facts.LinkLayer, _ = read(filepath.Join(h.portDir, "link_layer"))
		h.facts.Firmware, _ = read(filepath.Join(h.devDir, "fw_ver"))
		h.facts.Rate, _ = read(filepath.Join(h.portDir, "rate"))
		nt, _ := read(filepath.Join(h.devDir, "node_type"))
		h.iwarp = strings.Contains(nt, "RNIC")
		h.gids = portGIDs(in, h.portDir)
		types := map[string]bool{}
		for _, g := range h.gids {
			if g.typ != "" {
				types[g.typ] = true
			}
		}
		for t := range types {
			h.facts.GIDTypes = append(h.facts.GIDTypes, t)
		}
		sort.Strings(h.facts.GIDTypes)
		if p, err := filepath.EvalSymlinks(filepath.Join(h.devDir, "device")); err == nil && isPCI(filepath.Base(p)) {
			h.pciDir = p
			h.facts.PCIeSpeed, _ = read(filepath.Join(p, "current_link_speed"))
			h.facts.PCIeWidth, _ = read(filepath.Join(p, "current_link_width"))
		}
	}
	h.facts.Netdev = in.Netdev
	if h.facts.Netdev == "" {
		h.facts.Netdev = h.findNetdev()
	}
	if h.facts.Netdev != "" {
		h.netDir = h.path("sys/class/net", h.facts.Netdev)
		h.facts.NetdevMTU, _ = readInt(filepath.Join(h.netDir, "mtu"))
	}
	return h
}

// findNetdev names the netdev under the port: the ndev of its first GID
// that has one, else the PCI device's only net/ entry, else rxe's parent.
func (h *host) findNetdev() string {
	for _, g := range h.gids {
		if g.ndev != "" {
			return g.ndev
		}
	}
	if h.devDir == "" {
		return ""
	}
	if es, err := os.ReadDir(filepath.Join(h.devDir, "device", "net")); err == nil && len(es) == 1 {
		return es[0].Name()
	}
	if p, ok := read(filepath.Join(h.devDir, "parent")); ok && p != "" {
		return p
	}
	return h.netdevByMAC()
}

// netdevByMAC finds an iWARP device's netdev (siw has neither GID ndevs
// nor a parent): the netdev whose MAC address its first GID starts with.
func (h *host) netdevByMAC() string {
	if !h.iwarp || len(h.gids) == 0 {
		return ""
	}
	g := h.gids[0].gid.As16()
	mac := net.HardwareAddr(g[:6]).String()
	es, _ := os.ReadDir(h.path("sys/class/net"))
	for _, e := range es {
		if a, _ := read(h.path("sys/class/net", e.Name(), "address")); a == mac && mac != "00:00:00:00:00:00" {
			return e.Name()
		}
	}
	return ""
}

// portGIDs is the port's populated GIDs: from in.GIDs where the caller
// gives them, else from sysfs.
func portGIDs(in Input, portDir string) []gidEntry {
	if in.GIDs != nil {
		if gs, err := in.GIDs(); err == nil {
			out := make([]gidEntry, 0, len(gs))
			for _, g := range gs {
				out = append(out, gidEntry{index: g.Index, gid: g.Addr, typ: g.Type, ndev: g.Netdev})
			}
			return out
		}
	}
	return readGIDs(portDir)
}

// readGIDs reads the port's populated GIDs (all-zero entries are empty
// slots), by index.
func readGIDs(portDir string) []gidEntry {
	es, err := os.ReadDir(filepath.Join(portDir, "gids"))
	if err != nil {
		return nil
	}
	var out []gidEntry
	for _, e := range es {
		i, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s, _ := read(filepath.Join(portDir, "gids", e.Name()))
		a, err := netip.ParseAddr(s)
		if err != nil || a.IsUnspecified() {
			continue
		}
		g := gidEntry{index: i, gid: a}
		g.typ, _ = read(filepath.Join(portDir, "gid_attrs", "types", e.Name()))
		g.ndev, _ = read(filepath.Join(portDir, "gid_attrs", "ndevs", e.Name()))
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// pciName matches a PCI function's sysfs name, e.g. 0000:3b:00.0.
var pciName = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

func isPCI(name string) bool { return pciName.MatchString(name) }

// isRoCE reports whether the port runs RoCE (an Ethernet link layer, not
// iWARP); known is false when the link layer could not be read.
func (h *host) isRoCE() (roce, known bool) {
	if h.facts.LinkLayer == "" {
		return false, false
	}
	return h.facts.LinkLayer == "Ethernet" && !h.iwarp, true
}

// noDevice is the detail of a device check without a device.
const noDevice = "no RDMA device to check (none found; name one with -d)"

// devWhat names the device and port, e.g. "mlx5_0 port 1".
func (h *host) devWhat() string { return h.in.Device + " port " + strconv.Itoa(h.in.Port) }
