package bench

import (
	"net"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/result"
)

// sideEnv is one side's environment: the device's (device.CollectEnv, with the
// chosen GID and why the device was chosen), or the TCP baseline's when dev
// is nil; local is the control connection's local address and cpu the
// engine's CPU (-1: not pinned). The checks (CheckEnv) are included.
func sideEnv(dev *device.Device, local net.Addr, cpu int) (result.Env, []string, error) {
	var env result.Env
	var warns []string
	if dev == nil {
		env, warns = kinds.TCPEnv(local, cpu)
	} else {
		var err error
		if env, warns, err = device.CollectEnv(dev.Ctx, dev.Port.Port); err != nil {
			return env, nil, err
		}
		env.DeviceReason, env.Netdev = dev.Reason, dev.GID.Netdev
		if ifc := device.NetdevOfGID(dev.GID.GID); env.Netdev == "" && dev.Ctx.IsIWARP() && ifc != nil {
			env.Netdev = ifc.Name // iWARP GIDs carry the netdev's MAC
		}
		env.GIDIndex, env.GIDType, env.GID, env.GIDReason = dev.GID.Index, dev.GID.Type.String(), dev.GID.GID.String(), dev.GIDReason
		env.EnginePinnedCPU = cpu
		pl := dev.NUMA()
		env.NUMA = &pl
		_, findings := deviceDoctor(dev)
		env.Doctor = doctor.Compact(findings)
	}
	checks, cw := hostenv.CheckEnv(env.Device, env.EnginePinnedCPU)
	env.Checks = checks
	return env, append(warns, cw...), nil
}
