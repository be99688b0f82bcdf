package hostenv

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Rails: the order of a host's RDMA devices that pairs NIC i of one host
// with NIC i of another (`doctor HOST`, `mesh --rails`).

// RailKey is what orders one RDMA device among a host's rails.
type RailKey struct {
	Device string
	// Node is the device's NUMA node, -1 unknown (software devices, one
	// node).
	Node int
	// PCI is the device's PCI function (0000:3b:00.0), "" for a device
	// without one (rxe, siw).
	PCI string
}

// pciFunc matches a PCI function's sysfs name.
var pciFunc = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// RailKeyOf reads device dev's NUMA node and PCI function under the sysfs
// tree at root ("/sys" on a live system): class/infiniband/<dev>/device.
func RailKeyOf(root, dev string) RailKey {
	k := RailKey{Device: dev, Node: -1}
	d := filepath.Join(root, "class", "infiniband", dev, "device")
	if p, err := filepath.EvalSymlinks(d); err == nil && pciFunc.MatchString(filepath.Base(p)) {
		k.PCI = filepath.Base(p)
	}
	if b, err := os.ReadFile(filepath.Join(d, "numa_node")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 {
			k.Node = n
		}
	}
	return k
}

// SortRails orders keys as rails: by NUMA node (unknown last), then the
// devices with a PCI function by its address, then those without by name.
func SortRails(keys []RailKey) {
	node := func(k RailKey) int {
		if k.Node < 0 {
			return 1 << 30
		}
		return k.Node
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if node(a) != node(b) {
			return node(a) < node(b)
		}
		if (a.PCI == "") != (b.PCI == "") {
			return a.PCI != ""
		}
		if a.PCI != b.PCI {
			return a.PCI < b.PCI
		}
		return a.Device < b.Device
	})
}

// RailOrder returns devs in rail order, read under the sysfs tree at root.
func RailOrder(root string, devs []string) []string {
	keys := make([]RailKey, len(devs))
	for i, d := range devs {
		keys[i] = RailKeyOf(root, d)
	}
	SortRails(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Device
	}
	return out
}
