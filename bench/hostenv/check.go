package hostenv

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/numa"

	"golang.org/x/sys/unix"
)

// sysRoot is the directory under which CheckEnv reads its sys and proc
// files: "/" on a live system, a fake tree in tests.
var sysRoot = "/"

// goarch is runtime.GOARCH (a variable for tests).
var goarch = runtime.GOARCH

// memlockLimit returns the process's RLIMIT_MEMLOCK (a variable for tests).
var memlockLimit = func() (unix.Rlimit, error) {
	var r unix.Rlimit
	err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r)
	return r, err
}

const (
	// noCPUFreq is the governor reported when no CPU has cpufreq.
	noCPUFreq = "unknown (no cpufreq: VM or fixed clock)"
	// minMemlock is the locked-memory limit below which CheckEnv warns.
	minMemlock = 64 << 20
	// capIPCLock is the bit of CAP_IPC_LOCK in CapEff.
	capIPCLock = 14
	cpuDir     = "sys/devices/system/cpu"
	nodeDir    = "sys/devices/system/node"
)

// CheckEnv inspects the CPU frequency governors, the TSC, SMT, the NUMA
// placement of device dev and of pinnedCPU (-1: not pinned) and the
// locked-memory limit. It returns the facts and warnings for the user, each
// naming the value found and what to do. Facts it cannot read stay unknown
// and raise no warning. It does not repeat the software RDMA banner.
func CheckEnv(dev string, pinnedCPU int) (result.EnvChecks, []string) {
	checks := result.EnvChecks{DeviceNUMANode: -1, CPUNUMANode: -1}
	c := checker{&checks}
	var warn []string
	for _, w := range []string{
		c.checkGovernors(),
		c.checkTSC(),
		c.checkSMT(pinnedCPU),
		c.checkNUMA(dev, pinnedCPU),
		c.checkMemlock(),
	} {
		if w != "" {
			warn = append(warn, w)
		}
	}
	return checks, warn
}

// checker fills one EnvChecks, one check per method.
type checker struct{ *result.EnvChecks }

// checkGovernors fills c.Governors and warns about CPUs whose governor is
// not "performance".
func (c checker) checkGovernors() string {
	byGov := map[string][]int{}
	n := 0
	for _, cpu := range cpuIDs() {
		if g := readSys(cpuDir, cpuName(cpu), "cpufreq/scaling_governor"); g != "" {
			byGov[g] = append(byGov[g], cpu)
			n++
		}
	}
	if n == 0 {
		c.Governors = []string{noCPUFreq}
		return ""
	}
	var slow []string
	for g, cpus := range byGov {
		c.Governors = append(c.Governors, g)
		if g != "performance" {
			slow = append(slow, fmt.Sprintf("%s on CPU %s", g, numa.FormatList(cpus)))
		}
	}
	sort.Strings(c.Governors)
	if len(slow) == 0 {
		return ""
	}
	sort.Strings(slow)
	return fmt.Sprintf("CPU frequency governor is %s (of %d CPUs): cores clock down between operations, "+
		"which raises and spreads latency; for repeatable numbers set the performance governor "+
		"(cpupower frequency-set -g performance)", strings.Join(slow, ", "), n)
}

// checkTSC fills c.InvariantTSC and, on x86, warns when the TSC is not
// invariant, naming the kernel clocksource.
func (c checker) checkTSC() string {
	flags, ok := cpuFlags()
	c.InvariantTSC = flags["constant_tsc"] && flags["nonstop_tsc"]
	if !ok || c.InvariantTSC || (goarch != "amd64" && goarch != "386") {
		return ""
	}
	var missing []string
	for _, f := range []string{"constant_tsc", "nonstop_tsc"} {
		if !flags[f] {
			missing = append(missing, f)
		}
	}
	msg := fmt.Sprintf("no invariant TSC (/proc/cpuinfo flags lack %s): rdmabench times with CLOCK_MONOTONIC_RAW, "+
		"not the raw TSC, so results stay correct; it matters only through the kernel clocksource", strings.Join(missing, " and "))
	switch cs := readSys("sys/devices/system/clocksource/clocksource0/current_clocksource"); cs {
	case "":
		return msg + ", which is unknown"
	case "tsc":
		return msg + ", now tsc, which the kernel may drop as unstable; timestamps then cost more (see clock_read_cost_ns)"
	default:
		return msg + ", which is " + cs + ", not tsc: each timestamp costs more than a TSC read (see clock_read_cost_ns)"
	}
}

// checkSMT fills c.SMTActive and c.PinnedCPUSiblings and warns when the
// pinned CPU shares its core with an online sibling.
func (c checker) checkSMT(pinned int) string {
	c.SMTActive = readSys(cpuDir, "smt/active") == "1"
	if pinned < 0 {
		return ""
	}
	sibs, _ := parseCPUList(readSys(cpuDir, cpuName(pinned), "topology/thread_siblings_list"))
	online, known := parseCPUList(readSys(cpuDir, "online"))
	isOnline := map[int]bool{}
	for _, cpu := range online {
		isOnline[cpu] = true
	}
	var others []int
	for _, cpu := range sibs {
		if cpu != pinned && (!known || isOnline[cpu]) {
			others = append(others, cpu)
		}
	}
	if len(others) == 0 {
		return ""
	}
	c.PinnedCPUSiblings = numa.FormatList(others)
	return fmt.Sprintf("SMT is on: CPU %d, where the engine thread is pinned, shares its core with CPU %s; "+
		"anything running there (other processes, interrupts, Go runtime threads) competes for the core and adds jitter: "+
		"keep CPU %s idle (isolcpus, taskset) or turn SMT off (echo off > /sys/devices/system/cpu/smt/control)",
		pinned, c.PinnedCPUSiblings, c.PinnedCPUSiblings)
}

// checkNUMA fills the NUMA fields and warns when the engine runs, or may
// run, on another node than device dev.
func (c checker) checkNUMA(dev string, pinned int) string {
	if dev != "" {
		if n, err := strconv.Atoi(readSys("sys/class/infiniband", dev, "device/numa_node")); err == nil && n >= 0 {
			c.DeviceNUMANode = n
		}
	}
	if pinned >= 0 {
		c.CPUNUMANode = cpuNode(pinned)
	}
	if c.DeviceNUMANode < 0 {
		return ""
	}
	node := c.DeviceNUMANode
	c.DeviceNodeCPUs = readSys(nodeDir, "node"+strconv.Itoa(node), "cpulist")
	cpus := c.DeviceNodeCPUs
	if cpus == "" {
		cpus = "see /" + filepath.Join(nodeDir, "node"+strconv.Itoa(node), "cpulist")
	}
	switch {
	case c.CPUNUMANode >= 0 && c.CPUNUMANode != node:
		return fmt.Sprintf("engine pinned to CPU %d on NUMA node %d, %s is on node %d: cross-node traffic adds latency; "+
			"pin with --cpu to a CPU of node %d: %s", pinned, c.CPUNUMANode, dev, node, node, cpus)
	case pinned < 0 && numNodes() > 1:
		return fmt.Sprintf("engine thread not pinned and %s is on NUMA node %d of %d: the scheduler may run it on another node, "+
			"which adds latency; pin with --cpu to a CPU of node %d: %s", dev, node, numNodes(), node, cpus)
	}
	return ""
}

// checkMemlock fills the memlock fields and c.CapIPCLock, and warns when
// memory registration is limited to under minMemlock.
func (c checker) checkMemlock() string {
	r, err := memlockLimit()
	if err != nil {
		return ""
	}
	c.MemlockSoftBytes, c.MemlockHardBytes = rlimBytes(r.Cur), rlimBytes(r.Max)
	c.CapIPCLock = hasCapIPCLock()
	if c.CapIPCLock || c.MemlockSoftBytes < 0 || c.MemlockSoftBytes >= minMemlock {
		return ""
	}
	return fmt.Sprintf("locked-memory limit (RLIMIT_MEMLOCK) is %s (hard limit %s) and the process lacks CAP_IPC_LOCK: "+
		"registering more than that fails with ENOMEM (Cannot allocate memory); raise it to at least 64 MiB, best unlimited: "+
		"ulimit -l unlimited, a memlock line in /etc/security/limits.conf, LimitMEMLOCK=infinity for systemd, "+
		"docker run --ulimit memlock=-1", formatLimit(c.MemlockSoftBytes), formatLimit(c.MemlockHardBytes))
}

// readSys returns the trimmed content of the file at path elements elem
// under sysRoot, or "" when it cannot be read.
func readSys(elem ...string) string {
	b, err := os.ReadFile(filepath.Join(append([]string{sysRoot}, elem...)...))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func cpuName(cpu int) string { return "cpu" + strconv.Itoa(cpu) }

// cpuIDs lists the CPUs in sysfs, sorted.
func cpuIDs() []int {
	return numberedDirs(filepath.Join(sysRoot, cpuDir, "cpu[0-9]*"), "cpu")
}

// numNodes counts the NUMA nodes in sysfs.
func numNodes() int {
	return len(numberedDirs(filepath.Join(sysRoot, nodeDir, "node[0-9]*"), "node"))
}

// cpuNode returns the NUMA node of cpu from its nodeN link, or -1.
func cpuNode(cpu int) int {
	nodes := numberedDirs(filepath.Join(sysRoot, cpuDir, cpuName(cpu), "node[0-9]*"), "node")
	if len(nodes) != 1 {
		return -1
	}
	return nodes[0]
}

// numberedDirs returns, sorted, the numbers N of the paths matching pattern
// whose base name is prefix followed by N.
func numberedDirs(pattern, prefix string) []int {
	paths, _ := filepath.Glob(pattern)
	var ids []int
	for _, p := range paths {
		if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), prefix)); err == nil && n >= 0 {
			ids = append(ids, n)
		}
	}
	sort.Ints(ids)
	return ids
}

// cpuFlags returns the flags of the first CPU in /proc/cpuinfo and whether
// there was a flags line.
func cpuFlags() (map[string]bool, bool) {
	f, err := os.Open(filepath.Join(sysRoot, "proc/cpuinfo"))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok || strings.TrimSpace(k) != "flags" {
			continue
		}
		flags := map[string]bool{}
		for _, fl := range strings.Fields(v) {
			flags[fl] = true
		}
		return flags, true
	}
	return nil, false
}

// hasCapIPCLock reports whether CapEff in /proc/self/status has
// CAP_IPC_LOCK.
func hasCapIPCLock() bool {
	for _, line := range strings.Split(readSys("proc/self/status"), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<capIPCLock) != 0
		}
	}
	return false
}

// rlimBytes converts a resource limit to bytes, -1 for unlimited.
func rlimBytes(v uint64) int64 {
	if v == unix.RLIM_INFINITY || v > math.MaxInt64 {
		return -1
	}
	return int64(v)
}

// formatLimit formats b as "64 KiB", "8 MiB", "unlimited" (-1) or bytes.
func formatLimit(b int64) string {
	if b < 0 {
		return "unlimited"
	}
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if b >= u.size && b%u.size == 0 {
			return fmt.Sprintf("%d %s", b/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", b)
}

// parseCPUList parses a sysfs CPU list such as "0-3,8,10-11". It reports
// false when s is empty or malformed.
func parseCPUList(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b > 1<<20 { // no machine has a million CPUs; no overflow below
			return nil, false
		}
		for cpu := a; cpu <= b; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, true
}

// OnlineCPUs is what a --cpu list is checked against (ParseCPUs): one more
// than the highest CPU online (sysfs cpu/online). It is not the count of
// CPUs this process may run on now (runtime.NumCPU), which under
// 'taskset -c 1' is 1 and would refuse CPU 1; runtime.NumCPU serves only
// where sysfs says nothing.
func OnlineCPUs() int {
	return onlineCPUs(readSys(cpuDir, "online"))
}

func onlineCPUs(list string) int {
	cpus, ok := parseCPUList(list)
	if !ok || len(cpus) == 0 {
		return runtime.NumCPU()
	}
	return cpus[len(cpus)-1] + 1
}

// MemlockLimit is the process's RLIMIT_MEMLOCK.
func MemlockLimit() (unix.Rlimit, error) { return memlockLimit() }
