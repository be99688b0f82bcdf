package bench

import (
	"fmt"
	"net/netip"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// CheckDeviceLimits opens device name (port; "" and 0: chosen as a client
// on local would choose) and holds every spec against its limits before
// anything runs, as a run's first check does (endpoint.Supports), plus the QPs one
// test opens on it at once: sides ends (2 in loopback, where both ends are
// on this device) of its measured and load QPs, against max_qp. An error
// names the test, the device and the limit, and wraps
// verbs.ErrNotSupported (exit 3). It is how 'rdmabench cliffs' refuses a
// ladder point up front.
func CheckDeviceLimits(name string, port, gidIndex int, local netip.Addr, specs []spec.Spec, sides int) error {
	dev, err := device.Open(name, port, gidIndex, local)
	if err != nil {
		return err
	}
	defer dev.Close()
	if err := endpoint.CheckSpecs(dev, specs); err != nil {
		return err
	}
	for _, s := range specs {
		qps := s.NumQPs() + s.IdleQPs
		if s.Load != nil {
			qps += s.Load.QPs
		}
		if n := sides * qps; dev.Attr.MaxQP > 0 && n > dev.Attr.MaxQP {
			return fmt.Errorf("%s: %d QPs on %s at once (%d per end × %d ends) are above its max_qp %d: %w",
				s.Name(), n, dev.Ctx.Name(), qps, sides, dev.Attr.MaxQP, verbs.ErrNotSupported)
		}
	}
	return nil
}

// CheckAhead holds every test of a search or of a series of rounds
// ('rdmabench cliffs', 'isolation') against this process's budget
// (CheckBudget), then, in loopback or with c.Device named, against the
// device's limits (CheckDeviceLimits: c's device, port and GID index, both
// ends on it in loopback), before the first runs. Against a server without
// c.Device the device follows the route to it, and each run checks it.
func (c ClientConfig) CheckAhead(specs []spec.Spec, b endpoint.Budget, loopback bool) error {
	if err := endpoint.CheckBudget(specs, b, loopback); err != nil {
		return err
	}
	if !loopback && c.Device == "" {
		return nil
	}
	local, sides := netip.MustParseAddr("127.0.0.1"), 2
	if !loopback {
		local, sides = netip.Addr{}, 1
	}
	return CheckDeviceLimits(c.Device, c.Port, c.GIDIndex, local, specs, sides)
}
