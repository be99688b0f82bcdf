package device

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/numa"
)

// NUMAChoice is what the user asked for about NUMA placement. The zero
// value is the default: the device's node (perftest 6.x does the same).
type NUMAChoice struct {
	Node   int  // the node to use, with Set (--numa-node)
	Set    bool // Node was given
	NoBind bool // --no-numa-bind: neither pin nor bind
}

// NUMANodeError is a --numa-node of a node that is not online (a usage
// error, exit 2).
type NUMANodeError struct {
	Node   int
	Online []int
}

func (e *NUMANodeError) Error() string {
	return fmt.Sprintf("--numa-node %d: no such NUMA node (online: %s)", e.Node, numa.FormatList(e.Online))
}

// Validate refuses, before any test, a --numa-node that is not online
// (*NUMANodeError) and --numa-node with --no-numa-bind.
func (c NUMAChoice) Validate() error {
	if !c.Set {
		return nil
	}
	if c.NoBind {
		return fmt.Errorf("--numa-node %d and --no-numa-bind contradict each other: give one", c.Node)
	}
	online, err := numa.Online()
	if err != nil {
		return fmt.Errorf("--numa-node %d: %w", c.Node, err)
	}
	if !slices.Contains(online, c.Node) {
		return &NUMANodeError{Node: c.Node, Online: online}
	}
	return nil
}

// placement is one side's NUMA placement: the record for the JSON and the
// node's CPUs, which unpinned engine threads are pinned to.
type placement struct {
	rec  result.NUMAPlacement
	cpus []int // nil: no node, or a node without CPUs
}

// bound reports whether the side's registered memory is bound to rec.Node.
func (p placement) bound() bool { return p.rec.MemoryBound }

// placeNUMA decides the placement of the side using device dev: the node
// is c.Node when set, else dev's node; none with --no-numa-bind, when the
// node is unknown (-1, as for rxe and siw) or not online, or when the
// machine has one node.
func placeNUMA(dev string, c NUMAChoice) placement {
	none := func(why string) placement {
		return placement{rec: result.NUMAPlacement{Node: -1, Source: result.NUMASourceNone, Reason: why}}
	}
	if c.NoBind {
		return none("--no-numa-bind")
	}
	node, source, why := numa.DeviceNode(dev), result.NUMASourceDevice, dev+"'s NUMA node"
	if c.Set {
		node, source, why = c.Node, result.NUMASourceFlag, "--numa-node"
	} else if node < 0 {
		return none(dev + " has no NUMA node")
	}
	online, err := numa.Online()
	switch {
	case err != nil:
		return none("NUMA nodes unknown: " + err.Error())
	case !slices.Contains(online, node):
		return none(fmt.Sprintf("node %d is not online (online: %s)", node, numa.FormatList(online)))
	case len(online) < 2:
		return none("this machine has one NUMA node")
	}
	p := placement{rec: result.NUMAPlacement{Node: node, Source: source, Reason: why, MemoryBound: true}}
	if cpus, err := numa.CPUs(node); err == nil && len(cpus) > 0 {
		p.cpus, p.rec.CPUs = cpus, numa.FormatList(cpus)
	} else if err != nil {
		p.rec.Reason += "; engine not pinned: " + err.Error()
	} else {
		p.rec.Reason += "; engine not pinned: node " + strconv.Itoa(node) + " has no CPUs"
	}
	return p
}

// Place decides d's NUMA placement for choice c (placeNUMA): the engine
// threads of tests on d that --cpu does not pin are pinned to the node's
// CPUs, and the tests' registered memory is bound to the node.
func (d *Device) Place(c NUMAChoice) { d.numa = placeNUMA(d.Ctx.Name(), c) }

// NUMA is d's NUMA placement as the JSON records it (Source "none" until
// Place).
func (d *Device) NUMA() result.NUMAPlacement {
	if d.numa.rec.Source == "" {
		return result.NUMAPlacement{Node: -1, Source: result.NUMASourceNone, Reason: "not decided"}
	}
	return d.numa.rec
}

// BindMemory runs alloc with its mappings bound to d's node when d's
// placement binds memory, else as is.
func (d *Device) BindMemory(alloc func() error) error {
	if !d.numa.bound() {
		return alloc()
	}
	var aerr error
	if err := numa.Bind(d.numa.rec.Node, func() error { aerr = alloc(); return nil }); err != nil {
		return fmt.Errorf("bind the buffers to NUMA node %d (--no-numa-bind turns binding off): %w", d.numa.rec.Node, err)
	}
	return aerr
}

// CPUPlan is where --cpu pins the threads of a run (run, loopback,
// isolation): the client's engine thread, in loopback the in-process
// server's responder, and the load QPs' threads.
type CPUPlan struct {
	Client int   // the engine thread's CPU (bench/measure.Options.CPU); -1: not pinned
	Server []int // loopback: the server's responder (bench.RunConfig.ServerCPUs); nil: not pinned
	Load   []int // the load QPs' threads, round robin (bench/measure.Options.LoadCPUs); nil: not pinned
}

// PlanCPUs reads --cpu's list (spec.ParseCPUs, against the CPUs online):
// the first CPU takes the client's engine thread, in loopback the second
// the server's responder, the rest (or, with at most two, all) the load
// QPs' threads. An empty list pins nothing. An error names --cpu.
func PlanCPUs(list string, loopback bool) (CPUPlan, error) {
	p := CPUPlan{Client: -1}
	if list == "" {
		return p, nil
	}
	cpus, err := spec.ParseCPUs(list, hostenv.OnlineCPUs())
	if err != nil {
		return p, fmt.Errorf("--cpu: %w", err)
	}
	p.Client, p.Load = cpus[0], cpus
	if loopback && len(cpus) > 1 {
		p.Server = cpus[1:2]
	}
	if len(cpus) > 2 {
		p.Load = cpus[2:]
	}
	return p, nil
}

// NodeCPUs are the CPUs of d's NUMA node (Place), to which the engine
// threads that --cpu does not pin are pinned; nil: no node, or a node
// without CPUs.
func (d *Device) NodeCPUs() []int { return d.numa.cpus }
