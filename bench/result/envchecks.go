package result

// EnvChecks holds host facts that affect latency and whether a run can
// register its memory, with CheckEnv's verdicts on them.
type EnvChecks struct {
	// Governors are the distinct CPU frequency governors, sorted, or
	// [noCPUFreq] when no CPU has cpufreq.
	Governors []string `json:"governors"`
	// InvariantTSC is whether /proc/cpuinfo lists constant_tsc and
	// nonstop_tsc (always false off x86).
	InvariantTSC bool `json:"invariant_tsc"`
	SMTActive    bool `json:"smt_active"` // /sys/devices/system/cpu/smt/active is 1
	// PinnedCPUSiblings lists the online SMT siblings of the pinned CPU,
	// e.g. "6"; empty when not pinned or none.
	PinnedCPUSiblings string `json:"pinned_cpu_siblings,omitempty"`
	DeviceNUMANode    int    `json:"device_numa_node"`           // -1: unknown, software device or no NUMA
	DeviceNodeCPUs    string `json:"device_node_cpus,omitempty"` // CPUs of DeviceNUMANode, e.g. "0-15,32-47"
	CPUNUMANode       int    `json:"cpu_numa_node"`              // node of the pinned CPU; -1: not pinned or unknown
	MemlockSoftBytes  int64  `json:"memlock_soft_bytes"`         // RLIMIT_MEMLOCK; -1: unlimited
	MemlockHardBytes  int64  `json:"memlock_hard_bytes"`         // -1: unlimited
	CapIPCLock        bool   `json:"cap_ipc_lock"`               // CapEff has CAP_IPC_LOCK: no memlock limit applies
}
