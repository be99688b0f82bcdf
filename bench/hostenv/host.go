package hostenv

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/rdmabench/rdmabench/bench/result"

	"golang.org/x/sys/unix"
)

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
	if f, err := os.Open(dpkgStatus); err == nil {
		v := dpkgVersion(f)
		f.Close()
		if v != "" {
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

// dpkgStatus is dpkg's database of installed packages, read in place of
// running dpkg-query: a process start costs a fifth of a second under
// emulation, in every rdmabench process that reports its environment.
const dpkgStatus = "/var/lib/dpkg/status"

// dpkgStatusMax bounds how much of the status file is read (bytes); Debian
// 12 with a desktop holds about 5 MiB.
const dpkgStatusMax = 64 << 20

// dpkgVersion picks from dpkg's status file (stanzas of "Field: value"
// lines, blank-line separated) the version of the installed libibverbs1
// (the library in use), else of rdma-core: what dpkg-query -W prints. A
// stanza not installed ("Status: ... not-installed", "deinstall ok
// config-files") has none. Lines over 1 MiB end the read.
func dpkgVersion(r io.Reader) string {
	vers := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(r, dpkgStatusMax))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var pkg, ver string
	installed := false
	end := func() {
		if installed && ver != "" && (pkg == "libibverbs1" || pkg == "rdma-core") && vers[pkg] == "" {
			vers[pkg] = ver
		}
		pkg, ver, installed = "", "", false
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			end()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue // a continuation line
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			pkg = v
		case "Version":
			ver = v
		case "Status":
			installed = strings.HasSuffix(v, " installed")
		}
	}
	end()
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

// kernelClocksource names the kernel's current clocksource (e.g. "tsc").
func kernelClocksource() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Host fills what every transport reports about the host and its clock:
// host name, kernel, CPU model and count, Go version, the clock source and
// its resolution. The caller adds the clock's read cost (verbs.ClockCost:
// the C loops' clock). EnginePinnedCPU is -1.
func Host() result.Env {
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
	return env
}

// RDMACoreVersion is the rdma-core version (rdmaCoreVersion), "" when
// nothing tells it. It is found once per process: the libibverbs a process
// loaded stays what it is while it runs, and reading dpkg's database costs
// a few milliseconds, twice in every run (both sides' environments).
func RDMACoreVersion() string { return rdmaCoreOnce() }

var rdmaCoreOnce = sync.OnceValue(rdmaCoreVersion)
