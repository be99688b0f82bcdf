package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/result"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/verbs"
)

// CollectEnv describes the host, the device behind ctx and its port. It
// leaves PathMTU, the GID fields and InlineSizeGranted to the engine, which
// knows them once the QPs exist, and sets EnginePinnedCPU to -1 and QPType
// to "RC". The warnings are for the user: software RDMA, a port that is not
// active. Errors come from verbs unchanged; facts that cannot be found (host
// name, rdma-core version, CPU model) are left empty instead.
func CollectEnv(ctx *verbs.Context, port int) (result.Env, []string, error) {
	env, warn := hostEnv()
	env.Device, env.Driver, env.SoftwareRDMA, env.Port, env.QPType = ctx.Name(), ctx.Driver(), ctx.IsSoftware(), port, "RC"
	env.RDMACoreVersion = rdmaCoreVersion()

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

	if env.SoftwareRDMA { // runAll says which case applies (softwareNote)
		env.SoftwareRDMANote = result.SoftwareRDMANote(env.Device, env.Driver, "", false)
	}
	if !pa.Active {
		warn = append(warn, fmt.Sprintf("%s port %d is %s, not PORT_ACTIVE: the test will fail or measure nothing useful",
			env.Device, port, pa.State))
	}
	return env, warn, nil
}

// kernel returns the uname release and version, e.g.
// "6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC ...".
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return strings.TrimSpace(unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:]))
}

// libDirs are searched for the libibverbs shared library when neither dpkg
// nor /proc/self/maps tells its version.
var libDirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/powerpc64le-linux-gnu",
	"/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64",
}

// rdmaCoreVersion finds the rdma-core version: from dpkg where there is one,
// then from the file name of the libibverbs this process mapped, then from
// the libibverbs files in libDirs. It returns "" when all fail.
func rdmaCoreVersion() string {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(c, "dpkg-query", "-W", "-f=${Package} ${Version}\n", "libibverbs1", "rdma-core").Output()
	if err == nil || len(out) > 0 { // dpkg-query exits 1 when one of the packages is unknown
		if v := parseDpkgVersions(string(out)); v != "" {
			return v
		}
	}
	if b, err := os.ReadFile("/proc/self/maps"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 6 {
				continue
			}
			if v := libibverbsVersion(filepath.Base(f[len(f)-1])); v != "" {
				return v
			}
		}
	}
	for _, dir := range libDirs {
		files, _ := filepath.Glob(filepath.Join(dir, "libibverbs.so.1.*"))
		sort.Strings(files)
		for i := len(files) - 1; i >= 0; i-- {
			if v := libibverbsVersion(filepath.Base(files[i])); v != "" {
				return v
			}
		}
	}
	return ""
}

// parseDpkgVersions picks the version from "package version" lines printed
// by dpkg-query: libibverbs1's first (the library in use), else rdma-core's.
func parseDpkgVersions(out string) string {
	vers := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		pkg, ver, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.TrimSpace(ver) == "" {
			continue
		}
		pkg, _, _ = strings.Cut(pkg, ":") // libibverbs1:amd64
		vers[pkg] = strings.TrimSpace(ver)
	}
	if v := vers["libibverbs1"]; v != "" {
		return v
	}
	return vers["rdma-core"]
}

// libibverbsName matches rdma-core's library file name
// libibverbs.so.1.<ABI minor>.<rdma-core version>, e.g.
// libibverbs.so.1.14.44.0 for rdma-core 44.0.
var libibverbsName = regexp.MustCompile(`^libibverbs\.so\.1\.\d+\.(\d+(?:\.\d+)*)$`)

// libibverbsVersion returns the rdma-core version encoded in a libibverbs
// file name, or "".
func libibverbsVersion(name string) string {
	m := libibverbsName.FindStringSubmatch(name)
	if m == nil {
		return ""
	}
	return m[1]
}

// cpuModel reads the CPU model from /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return parseCPUModel(f)
}

// parseCPUModel returns the CPU model named in /proc/cpuinfo text: "model
// name" (x86, newer arm64 kernels), "cpu model" (mips), "cpu" (powerpc),
// "Processor" or "Hardware" (old arm), else the first CPU's implementer and
// part ids (arm64), or "".
func parseCPUModel(r io.Reader) string {
	keys := []string{"model name", "cpu model", "cpu", "Processor", "Hardware"}
	found := map[string]string{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, seen := found[k]; !seen && v != "" {
			found[k] = v
		}
	}
	for _, k := range keys {
		if v := found[k]; v != "" {
			return v
		}
	}
	if impl, part := found["CPU implementer"], found["CPU part"]; impl != "" && part != "" {
		return fmt.Sprintf("CPU implementer %s part %s", impl, part)
	}
	return ""
}

// hostEnv fills what every transport reports about the host and its clock.
func hostEnv() (result.Env, []string) {
	env := result.Env{ClockSource: "CLOCK_MONOTONIC_RAW", ClockRateHz: 1e9, NumCPU: runtime.NumCPU(),
		GoVersion: runtime.Version(), EnginePinnedCPU: -1}
	env.Host, _ = os.Hostname()
	env.Kernel = kernel()
	env.CPUModel = cpuModel()
	var ts unix.Timespec
	if err := unix.ClockGetres(unix.CLOCK_MONOTONIC_RAW, &ts); err == nil {
		env.ClockResolutionNS = ts.Nano()
	}
	env.KernelClocksource = kernelClocksource()
	env.ClockReadCostNS = verbs.ClockCost(10000)
	// whether that cost matters depends on each test's latency: runAll
	// warns per test (clockShareWarning)
	return env, nil
}

// kernelClocksource names the kernel's current clocksource (e.g. "tsc").
func kernelClocksource() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// sideEnv is one side's environment: the device's (CollectEnv, with the
// chosen GID and why the device was chosen), or the TCP baseline's when dev
// is nil; local is the control connection's local address and cpu the
// engine's CPU (-1: not pinned). The checks (CheckEnv) are included.
func sideEnv(dev *Device, local net.Addr, cpu int) (result.Env, []string, error) {
	var env result.Env
	var warns []string
	if dev == nil {
		env, warns = tcpEnv(local, cpu)
	} else {
		var err error
		if env, warns, err = CollectEnv(dev.Ctx, dev.Port.Port); err != nil {
			return env, nil, err
		}
		env.DeviceReason, env.Netdev = dev.Reason, dev.GID.Netdev
		if ifc := netdevOfGID(dev.GID.GID); env.Netdev == "" && dev.Ctx.IsIWARP() && ifc != nil {
			env.Netdev = ifc.Name // iWARP GIDs carry the netdev's MAC
		}
		env.GIDIndex, env.GIDType, env.GID, env.GIDReason = dev.GID.Index, dev.GID.Type.String(), dev.GID.GID.String(), dev.GIDReason
		env.EnginePinnedCPU = cpu
		pl := dev.NUMA()
		env.NUMA = &pl
		_, findings := deviceDoctor(dev)
		env.Doctor = doctor.Compact(findings)
	}
	checks, cw := CheckEnv(env.Device, env.EnginePinnedCPU)
	env.Checks = checks
	return env, append(warns, cw...), nil
}
