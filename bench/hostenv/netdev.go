package hostenv

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The network device under an RDMA port, through sysfs. On InfiniBand the
// control connection runs over an IPoIB netdev (ib0) and the GID table
// holds fe80::<GUID>, no IP address: only sysfs ties the address to the
// device. Hardware RoCE and iWARP NICs have the same links; rxe and siw
// have none (their netdev is known from the GID table).

// maxLowerDepth bounds the lower_* links followed from an upper netdev (a
// VLAN on a bond on a port, say).
const maxLowerDepth = 4

// NetdevPort maps the network interface ifname to the RDMA device and port
// beneath it, under the sysfs tree at root:
// class/net/<if>/device/infiniband/<dev> names the device (the PCI
// function's RDMA device) and class/net/<if>/dev_port the port, counted
// from 0 (dev_id where dev_port is missing). An upper netdev (a VLAN, a
// bond) has no device link: its lower_<if> links are followed, the first
// in name order. via is the netdev the device was found under. ok is
// false when no RDMA device lies beneath ifname.
func NetdevPort(root, ifname string) (dev string, port int, via string, ok bool) {
	for depth := 0; ifname != "" && depth <= maxLowerDepth; depth++ {
		dir := filepath.Join(root, "class", "net", ifname)
		if ents, err := os.ReadDir(filepath.Join(dir, "device", "infiniband")); err == nil && len(ents) > 0 {
			names := make([]string, 0, len(ents))
			for _, e := range ents {
				names = append(names, e.Name())
			}
			sort.Strings(names)
			n, okp := readSysInt(filepath.Join(dir, "dev_port"))
			if !okp {
				n, okp = readSysInt(filepath.Join(dir, "dev_id"))
			}
			if !okp {
				n = 0
			}
			return names[0], n + 1, ifname, true
		}
		ifname = lowerNetdev(dir)
	}
	return "", 0, "", false
}

// LowerNetdevs lists the netdevs beneath the upper netdev ifname (a VLAN's
// base, a bond's ports), from its lower_<if> links, and below those, nearest
// first; nil for a netdev that is no upper device.
func LowerNetdevs(root, ifname string) []string {
	var out []string
	for depth := 0; depth < maxLowerDepth; depth++ {
		if ifname = lowerNetdev(filepath.Join(root, "class", "net", ifname)); ifname == "" {
			break
		}
		out = append(out, ifname)
	}
	return out
}

// lowerNetdev is the first (by name) lower_<if> link of the netdev at dir,
// or "".
func lowerNetdev(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var lowers []string
	for _, e := range ents {
		if l, ok := strings.CutPrefix(e.Name(), "lower_"); ok && l != "" {
			lowers = append(lowers, l)
		}
	}
	if len(lowers) == 0 {
		return ""
	}
	sort.Strings(lowers)
	return lowers[0]
}

// readSysInt reads a sysfs attribute holding one integer (decimal or 0x
// hexadecimal, as dev_id is written).
func readSysInt(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 0, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int(n), true
}
