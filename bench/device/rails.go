package device

import (
	"path/filepath"

	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// Rails: a host's RDMA devices in the order that pairs NIC i of one host
// with NIC i of another (`doctor HOST`, `mesh --rails`).

// Rails lists the RDMA devices in rail order: NUMA node, then PCI address,
// then (devices without PCI: rxe, siw) name (hostenv.SortRails).
func Rails() ([]string, error) {
	names, err := verbs.DeviceNames()
	if err != nil {
		return nil, err
	}
	return hostenv.RailOrder(filepath.Join(sysRoot, "sys"), names), nil
}

// PortActive reports whether port (from 1) of device name is ACTIVE; a
// device that does not open or has no such port is not.
func PortActive(name string, port int) bool {
	ctx, err := verbs.Open(name)
	if err != nil {
		return false
	}
	defer ctx.Close()
	pa, err := ctx.QueryPort(port)
	return err == nil && pa.Active
}

// RailPort is one port of a host's rails.
type RailPort struct {
	Device string
	Port   int // from 1
}

// RailPorts lists every port of every RDMA device, the devices in rail
// order and each one's ports by number. A device that does not open
// counts as one port.
func RailPorts() ([]RailPort, error) {
	names, err := Rails()
	if err != nil {
		return nil, err
	}
	var out []RailPort
	for _, n := range names {
		ports := 1
		if ctx, err := verbs.Open(n); err == nil {
			if da, err := ctx.QueryDevice(); err == nil && da.PhysPortCnt > 1 {
				ports = da.PhysPortCnt
			}
			ctx.Close()
		}
		for p := 1; p <= ports; p++ {
			out = append(out, RailPort{Device: n, Port: p})
		}
	}
	return out, nil
}

// DoctorPort runs the doctor's checks for port of device name, opened
// now; a device that does not open has the checks that need it unknown.
func DoctorPort(name string, port int) (result.DoctorHost, []result.DoctorFinding) {
	var ctx *verbs.Context
	if name != "" {
		ctx, _ = verbs.Open(name)
	}
	in := DoctorInput(ctx, port, "")
	if ctx != nil {
		defer ctx.Close()
	} else if name != "" {
		in.Device, in.Port = name, port
	}
	doctorMu.Lock()
	defer doctorMu.Unlock()
	return doctor.Run(in)
}

// DoctorRails runs the doctor's checks on every port of the host
// (RailPorts), active or not, in rail order.
func DoctorRails() ([]result.DoctorPort, error) {
	ports, err := RailPorts()
	if err != nil {
		return nil, err
	}
	out := make([]result.DoctorPort, len(ports))
	for i, p := range ports {
		h, fs := DoctorPort(p.Device, p.Port)
		out[i] = result.DoctorPort{Rail: i, Local: h, Findings: fs}
	}
	return out, nil
}
