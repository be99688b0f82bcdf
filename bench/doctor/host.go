package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/internal/numa"
)

// The host's own checks: where the NIC's interrupts go, the locked-memory
// limit and the CPU frequency governor.

// checkIRQNUMA: the NIC's interrupts (completion vectors) should go to
// CPUs of the NIC's NUMA node; otherwise each completion crosses the
// interconnect before the poller or the waiter sees it.
func checkIRQNUMA(h *host) (string, string, string) {
	if h.pciDir == "" {
		return h.noPCI()
	}
	node, ok := readInt(filepath.Join(h.pciDir, "numa_node"))
	if !ok {
		return unknown, h.in.Device + ": numa_node not readable", "lstopo or lspci -vv shows the NIC's node"
	}
	if node < 0 {
		if on, ok := read(h.path("sys/devices/system/node/online")); ok && on == "0" {
			return pass, h.in.Device + ": one NUMA node: every CPU is local", ""
		}
		return unknown, h.in.Device + ": numa_node is -1 (the firmware did not say where the NIC sits)", "check the BIOS's ACPI SRAT/NUMA settings"
	}
	lc, _ := read(filepath.Join(h.pciDir, "local_cpulist"))
	local, err := numa.ParseList(lc)
	if err != nil {
		return unknown, fmt.Sprintf("%s: local_cpulist not readable (%v)", h.in.Device, err), "lstopo shows the NIC's CPUs"
	}
	es, err := os.ReadDir(filepath.Join(h.pciDir, "msi_irqs"))
	if err != nil || len(es) == 0 {
		return unknown, h.in.Device + ": no msi_irqs in sysfs", "cat /proc/interrupts | grep " + h.in.Device
	}
	isLocal := map[int]bool{}
	for _, c := range local {
		isLocal[c] = true
	}
	var far []int
	read1 := 0
	for _, e := range es {
		irq, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		aff, ok := read(h.path("proc/irq", e.Name(), "effective_affinity_list"))
		if !ok || aff == "" {
			aff, ok = read(h.path("proc/irq", e.Name(), "smp_affinity_list"))
		}
		cpus, err := numa.ParseList(aff)
		if !ok || err != nil {
			continue
		}
		read1++
		near := false
		for _, c := range cpus {
			near = near || isLocal[c]
		}
		if !near {
			far = append(far, irq)
		}
	}
	if read1 == 0 {
		return unknown, h.in.Device + ": no IRQ affinity readable in /proc/irq", "run doctor as root"
	}
	sort.Ints(far)
	if len(far) > 0 {
		return warn, fmt.Sprintf("%s (node %d, CPUs %s): %d of %d IRQs bound only to other nodes' CPUs: %s", h.in.Device, node, lc, len(far), read1, joinInts(far)),
			fmt.Sprintf("bind them to CPUs %s: echo %s > /proc/irq/N/smp_affinity_list (stop irqbalance or give it a policy; mlx5: set_irq_affinity_bynode.sh %d)", lc, lc, node)
	}
	return pass, fmt.Sprintf("%s (node %d): all %d IRQs on the node's CPUs %s", h.in.Device, node, read1, lc), ""
}

// minMemlock is the locked-memory limit below which memlock warns.
const minMemlock = 64 << 20

// capIPCLock is CAP_IPC_LOCK's bit in CapEff.
const capIPCLock = 14

// checkMemlock: every registered byte counts against RLIMIT_MEMLOCK
// unless the process has CAP_IPC_LOCK; above it, registration fails with
// ENOMEM.
func checkMemlock(h *host) (string, string, string) {
	soft, hard, err := h.in.Memlock()
	if err != nil {
		return unknown, "RLIMIT_MEMLOCK: " + err.Error(), "ulimit -l"
	}
	detail := fmt.Sprintf("RLIMIT_MEMLOCK %s (hard %s)", bytesOrUnlimited(soft), bytesOrUnlimited(hard))
	status, _ := read(h.path("proc/self/status"))
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			if c, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && c&(1<<capIPCLock) != 0 {
				return pass, detail + ", and CAP_IPC_LOCK: no limit applies", ""
			}
		}
	}
	if soft >= 0 && soft < minMemlock {
		return warn, detail + ": registering more than that fails with ENOMEM",
			"raise it to at least 64 MiB, best unlimited: ulimit -l unlimited, memlock in /etc/security/limits.conf, LimitMEMLOCK=infinity (systemd), docker --ulimit memlock=-1"
	}
	return pass, detail, ""
}

// bytesOrUnlimited formats a limit: "unlimited" (-1), "8 MiB", or bytes.
func bytesOrUnlimited(b int64) string {
	switch {
	case b < 0:
		return "unlimited"
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d bytes", b)
}

// checkGovernor: a governor other than performance clocks cores down
// between operations, which raises and spreads latency.
func checkGovernor(h *host) (string, string, string) {
	paths, _ := filepath.Glob(h.path("sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
	byGov := map[string][]int{}
	n := 0
	for _, p := range paths {
		cpu, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(p))), "cpu"))
		g, ok := read(p)
		if err != nil || !ok || g == "" {
			continue
		}
		byGov[g] = append(byGov[g], cpu)
		n++
	}
	if n == 0 {
		return unknown, "no CPU has cpufreq (a VM, or a fixed clock)", "on bare metal: cpupower frequency-set -g performance"
	}
	var slow []string
	for g, cpus := range byGov {
		if g != "performance" {
			slow = append(slow, fmt.Sprintf("%s on CPU %s", g, numa.FormatList(cpus)))
		}
	}
	sort.Strings(slow)
	if len(slow) > 0 {
		return warn, fmt.Sprintf("governor %s (of %d CPUs)", strings.Join(slow, ", "), n),
			"cpupower frequency-set -g performance"
	}
	return pass, fmt.Sprintf("performance on all %d CPUs", n), ""
}
