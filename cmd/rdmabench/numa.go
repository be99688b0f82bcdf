package main

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/device"

	flag "github.com/spf13/pflag"
)

// numaFlags are --numa-node and --no-numa-bind, shared by run, loopback
// and server.
type numaFlags struct {
	node   int
	noBind bool
}

func (n *numaFlags) add(fs *flag.FlagSet, who string) {
	fs.IntVar(&n.node, "numa-node", -1, "pin "+who+" and bind the registered buffers to this NUMA node (default: the device's node, "+
		"from /sys/class/infiniband/DEV/device/numa_node; none when it has none, as rxe and siw, or the machine has one node); --cpu still wins for the threads it pins")
	fs.BoolVar(&n.noBind, "no-numa-bind", false, "neither pin threads to the device's NUMA node nor bind the buffers to it")
}

// choice is the user's NUMA choice, refusing a node that is not online
// (exit 2, naming the online nodes) before any device is opened.
func (n *numaFlags) choice(fs *flag.FlagSet) (device.NUMAChoice, error) {
	c := device.NUMAChoice{NoBind: n.noBind}
	if fs.Changed("numa-node") {
		if n.node < 0 {
			return c, usageError{fmt.Errorf("--numa-node %d: want a node number >= 0", n.node)}
		}
		c.Node, c.Set = n.node, true
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c, nil
}
