package mesh

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/bench/device"
)

// Rails (--rails): NIC i of each host paired with NIC i of the others,
// one matrix per rail.

// RailDevices is this host's devices in rail order: list as given
// (--rail-devices), else every device whose port port is active, in rail
// order (device.Rails: NUMA node, then PCI address, then name).
func RailDevices(list []string, port int) ([]string, error) {
	if len(list) > 0 {
		return list, nil
	}
	names, err := device.Rails()
	if err != nil {
		return nil, fmt.Errorf("mesh --rails: %w", err)
	}
	var out []string
	for _, n := range names {
		if device.PortActive(n, port) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mesh --rails: no device with port %d active (of %s)", port, strings.Join(names, ", "))
	}
	return out, nil
}

// RailPath is the file of rail r's document for --json path:
// mesh.json → mesh.rail0.json.
func RailPath(path string, r int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.rail%d%s", strings.TrimSuffix(path, ext), r, ext)
}
