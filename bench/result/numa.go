package result

// NUMA placement sources (NUMAPlacement.Source).
const (
	NUMASourceDevice = "device" // the device's node (the default)
	NUMASourceFlag   = "flag"   // --numa-node
	NUMASourceNone   = "none"   // no placement: --no-numa-bind, no node, or one node
)

// NUMAPlacement is where one side put its engine threads and registered
// memory.
type NUMAPlacement struct {
	Node   int    `json:"node"`   // the NUMA node; -1 with Source "none"
	Source string `json:"source"` // NUMASourceDevice, NUMASourceFlag or NUMASourceNone
	// Reason says why, in plain words: "rxe0 has no NUMA node",
	// "--numa-node", "mlx5_0's NUMA node", "--no-numa-bind".
	Reason string `json:"reason"`
	// CPUs are the node's CPUs, which engine threads not pinned with --cpu
	// are pinned to, as a sysfs list ("2-3"); empty when none are.
	CPUs string `json:"cpus,omitempty"`
	// MemoryBound: the registered buffers were mapped under
	// set_mempolicy(MPOL_BIND) to Node.
	MemoryBound bool `json:"memory_bound"`
}
