package device

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmabench/rdmabench/bench/admit"

	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// SideEnv is one side's environment: the device's (CollectEnv, with the
// chosen GID and why the device was chosen), or the TCP baseline's when dev
// is nil (TCPEnv); local is the control connection's local address and cpu the
// engine's CPU (-1: not pinned). The checks (CheckEnv) are included.
func SideEnv(dev *Device, local net.Addr, cpu int) (result.Env, []string, error) {
	var env result.Env
	var warns []string
	if dev == nil {
		env, warns = TCPEnv(local, cpu)
	} else {
		var err error
		if env, warns, err = CollectEnv(dev.Ctx, dev.Port.Port); err != nil {
			return env, nil, err
		}
		env.DeviceReason, env.Netdev = dev.Reason, dev.GID.Netdev
		if ifc := NetdevOfGID(dev.GID.GID); env.Netdev == "" && dev.Ctx.IsIWARP() && ifc != nil {
			env.Netdev = ifc.Name // iWARP GIDs carry the netdev's MAC
		}
		env.GIDIndex, env.GIDType, env.GID, env.GIDReason = dev.GID.Index, dev.GID.Type.String(), dev.GID.GID.String(), dev.GIDReason
		env.EnginePinnedCPU = cpu
		pl := dev.NUMA()
		env.NUMA = &pl
		_, findings := Doctor(dev)
		env.Doctor = doctor.Compact(findings)
	}
	checks, cw := hostenv.CheckEnv(env.Device, env.EnginePinnedCPU)
	env.Checks = checks
	return env, append(warns, cw...), nil
}

// TCPEnv describes the host of a TCP-only run: what CollectEnv fills
// without a device, with the network interface of the control connection's
// local address as the device and "TCP" as the connection type.
func TCPEnv(local net.Addr, cpu int) (result.Env, []string) {
	env, warn := HostEnv()
	env.QPType, env.EnginePinnedCPU, env.Device, env.Transport = "TCP", cpu, "tcp", "TCP"
	if ifc := interfaceOf(admit.AddrOf(local)); ifc != nil {
		env.Device, env.ActiveMTU = ifc.Name, ifc.MTU
		env.LinkLayer = linkLayerOf(ifc.Name)
		if b, err := os.ReadFile("/sys/class/net/" + ifc.Name + "/speed"); err == nil {
			if mbps, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && mbps > 0 {
				env.LinkGbps = float64(mbps) / 1000
				env.LinkSpeed = strconv.FormatFloat(env.LinkGbps, 'f', 1, 64) + " Gbps"
			}
		}
		if ifc.Flags&net.FlagLoopback != 0 {
			warn = append(warn, "TCP over the loopback interface "+ifc.Name+": no network device is involved")
		}
	}
	return env, warn
}

// interfaceOf returns the network interface that holds ip, or nil.
func interfaceOf(ip netip.Addr) *net.Interface {
	if !ip.IsValid() {
		return nil
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for i := range ifs {
		addrs, err := ifs[i].Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if x, ok := netip.AddrFromSlice(n.IP); ok && x.Unmap() == ip {
					return &ifs[i]
				}
			}
		}
	}
	return nil
}

// linkLayerOf names the link layer of a network interface from its ARPHRD
// type in sysfs: "Ethernet", "InfiniBand" (IPoIB) or "Loopback".
func linkLayerOf(name string) string {
	b, err := os.ReadFile("/sys/class/net/" + name + "/type")
	if err != nil {
		return ""
	}
	switch strings.TrimSpace(string(b)) {
	case "1":
		return "Ethernet"
	case "32":
		return "InfiniBand"
	case "772":
		return "Loopback"
	}
	return ""
}

// DoctorInput is the doctor's input for port of ctx (nil: no device), with
// netdev ("": found in sysfs). The port is queried now, so a port that
// went down since the device was opened shows as it is.
func DoctorInput(ctx *verbs.Context, port int, netdev string) doctor.Input {
	in := doctor.Input{Netdev: netdev}
	in.Host, _ = os.Hostname()
	if ctx != nil {
		in.Device, in.Port = ctx.Name(), port
		if pa, err := ctx.QueryPort(port); err == nil {
			in.ActiveMTU, in.MaxMTU = pa.ActiveMTU, pa.MaxMTU
		}
		in.GIDs = func() ([]doctor.GID, error) {
			tbl, err := ctx.GIDTable(port)
			if err != nil {
				return nil, err
			}
			out := make([]doctor.GID, 0, len(tbl))
			for _, e := range tbl {
				typ := "IB/RoCE v1" // sysfs's name for IB and RoCE v1 entries
				if e.Type == verbs.GIDTypeRoCEv2 {
					typ = "RoCE v2"
				}
				out = append(out, doctor.GID{Index: e.Index, Addr: netip.AddrFrom16(e.GID), Type: typ, Netdev: e.Netdev})
			}
			return out, nil
		}
	}
	return in
}

// doctorMu lets one doctor run at a time in this process: each runs up to
// three tools, and many sessions asking at once must not fork a crowd.
var doctorMu sync.Mutex

// Doctor runs the doctor's checks for dev (nil: none).
func Doctor(dev *Device) (result.DoctorHost, []result.DoctorFinding) {
	doctorMu.Lock()
	defer doctorMu.Unlock()
	if dev == nil {
		return doctor.Run(DoctorInput(nil, 0, ""))
	}
	return doctor.Run(DoctorInput(dev.Ctx, dev.Port.Port, dev.GID.Netdev))
}
