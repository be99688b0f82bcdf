package device

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/clock"
	"github.com/rdmabench/rdmabench/verbs"
)

// This machine's cache line: each side rounds the messages it steps through
// its cycle buffer up to its own (spec.Spec.AddrStep, bench/endpoint's RecvStep).
func init() { spec.CacheLine = hostenv.CacheLine("/") }

// Where a run took place: the host (bench/hostenv), the device and its
// port, the GID and the placement chosen, the doctor's findings and the
// host checks, for each side's result.Env.

// CollectEnv describes the host, the device behind ctx and its port. It
// leaves PathMTU, the GID fields and InlineSizeGranted to the engine, which
// knows them once the QPs exist, and sets EnginePinnedCPU to -1 and QPType
// to "RC". The warnings are for the user: software RDMA, a port that is not
// active. Errors come from verbs unchanged; facts that cannot be found (host
// name, rdma-core version, CPU model) are left empty instead.
func CollectEnv(ctx *verbs.Context, port int) (result.Env, []string, error) {
	env, warn := HostEnv()
	env.Device, env.Driver, env.SoftwareRDMA, env.Port, env.QPType = ctx.Name(), ctx.Driver(), ctx.IsSoftware(), port, "RC"
	env.RDMACoreVersion = hostenv.RDMACoreVersion()

	da, err := ctx.QueryDevice()
	if err != nil {
		return env, nil, err
	}
	env.Firmware, env.VendorID, env.VendorPartID = da.FWVer, da.VendorID, da.VendorPartID
	pa, err := ctx.QueryPort(port)
	if err != nil {
		return env, nil, err
	}
	env.LinkLayer, env.ActiveMTU, env.LinkSpeed, env.LinkGbps, env.LinkDataGbps = pa.LinkLayer, pa.ActiveMTU, pa.Speed, pa.LinkGbps(), pa.DataGbps
	env.Transport = transportOf(ctx, pa.LinkLayer)

	if env.SoftwareRDMA { // bench's runAll says which case applies (softwareNote)
		env.SoftwareRDMANote = result.SoftwareRDMANote(env.Device, env.Driver, "", false)
	}
	if !pa.Active {
		warn = append(warn, fmt.Sprintf("%s port %d is %s, not PORT_ACTIVE: the test will fail or measure nothing useful",
			env.Device, port, pa.State))
	}
	return env, warn, nil
}

// HostEnv is hostenv.Host with the read cost of the C loops' clock.
func HostEnv() (result.Env, []string) {
	env := hostenv.Host()
	warn := clock.FillEnv(&env) // --clock: the counter where sound (selected once per process)
	env.ClockReadCostNS = verbs.ClockCost(10000)
	// whether that cost matters depends on each test's latency: bench's runAll
	// warns per test (hostenv.ClockShareWarning)
	return env, warn
}
