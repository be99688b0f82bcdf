// Package numa reads the NUMA topology from sysfs and binds memory
// allocations to a node with set_mempolicy(2). It is pure Go
// (golang.org/x/sys/unix, no cgo) and Linux only.
package numa

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Root is the directory under which the sysfs files are read: "/" on a
// live system, a fake tree in tests.
var Root = "/"

const nodeDir = "sys/devices/system/node"

func read(elem ...string) (string, error) {
	b, err := os.ReadFile(filepath.Join(append([]string{Root}, elem...)...))
	return strings.TrimSpace(string(b)), err
}

// DeviceNode is the NUMA node of RDMA device dev from
// /sys/class/infiniband/DEV/device/numa_node; -1 when the file is missing
// or unreadable or says -1 (software devices such as rxe and siw, and
// machines without NUMA).
func DeviceNode(dev string) int {
	if dev == "" || strings.ContainsAny(dev, "/") || dev == "." || dev == ".." {
		return -1
	}
	s, err := read("sys/class/infiniband", dev, "device/numa_node")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// Online lists the online NUMA nodes, sorted, from
// /sys/devices/system/node/online; [0] when the kernel has no NUMA support
// (the file is missing).
func Online() ([]int, error) {
	s, err := read(nodeDir, "online")
	if os.IsNotExist(err) {
		return []int{0}, nil
	}
	if err != nil {
		return nil, err
	}
	nodes, err := ParseList(s)
	if err != nil {
		return nil, fmt.Errorf("%s/online: %w", nodeDir, err)
	}
	return nodes, nil
}

// CPUs lists the CPUs of node, sorted, from
// /sys/devices/system/node/nodeN/cpulist (empty for a memory-only node).
func CPUs(node int) ([]int, error) {
	if node < 0 {
		return nil, fmt.Errorf("NUMA node %d: want a node number >= 0", node)
	}
	s, err := read(nodeDir, "node"+strconv.Itoa(node), "cpulist")
	if err != nil {
		return nil, fmt.Errorf("NUMA node %d: %w", node, err)
	}
	if s == "" {
		return nil, nil
	}
	cpus, err := ParseList(s)
	if err != nil {
		return nil, fmt.Errorf("NUMA node %d cpulist: %w", node, err)
	}
	return cpus, nil
}

// maxID bounds list entries: no machine has a million CPUs or nodes, and
// ranges stay far from overflow.
const maxID = 1 << 20

// ParseList parses a sysfs list such as "0-3,8,10-11" into its numbers,
// sorted and without duplicates.
func ParseList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list")
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b > maxID {
			return nil, fmt.Errorf("list %q: bad entry %q (want numbers such as 2, 0,2 or 0-3 below %d)", s, part, maxID)
		}
		for i := a; i <= b; i++ {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

// FormatList formats numbers as a sysfs list, e.g. "0-3,8".
func FormatList(ids []int) string {
	ids = append([]int(nil), ids...)
	sort.Ints(ids)
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] <= ids[j]+1 {
			j++
		}
		if ids[j] == ids[i] {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
