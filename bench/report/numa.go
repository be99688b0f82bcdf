package report

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// NUMALine describes e's NUMA placement for the header: "node 1
// (--numa-node), engine on CPUs 2-3, buffers bound" or "none (rxe0 has no
// NUMA node)".
func NUMALine(e *result.Env) string {
	p := e.NUMA
	if p == nil {
		return ""
	}
	if p.Source == result.NUMASourceNone {
		return "none (" + p.Reason + ")"
	}
	parts := []string{fmt.Sprintf("node %d (%s)", p.Node, p.Reason)}
	switch {
	case e.EnginePinnedCPU >= 0:
		parts = append(parts, fmt.Sprintf("engine on CPU %d (--cpu)", e.EnginePinnedCPU))
	case strings.ContainsAny(p.CPUs, ",-"):
		parts = append(parts, "engine on CPUs "+p.CPUs)
	case p.CPUs != "":
		parts = append(parts, "engine on CPU "+p.CPUs)
	}
	if p.MemoryBound {
		parts = append(parts, "buffers bound")
	}
	return strings.Join(parts, ", ")
}
