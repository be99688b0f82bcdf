// Package cliffs is `rdmabench cliffs`: it measures one test along one
// axis (QPs, message size, queue depth, outstanding reads), first at the
// points of a geometric ladder, then by bisection inside each ladder step
// where the figure fell, each point several times on fresh QPs, and
// reports each knee (bench/knee) with the drop's interval and the port
// counters that moved across it. The plan (points, runs, time) is said
// and every point's test checked against rdmabench's, the device's and
// the memory budget's limits before the first point runs.
package cliffs

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The axes.
const (
	AxisQPs      = "qps"               // measured QPs (-q)
	AxisSize     = "size"              // message size, bytes (-s)
	AxisTxDepth  = "tx_depth"          // send queue depth (-t)
	AxisOutReads = "outstanding_reads" // READ/atomic operations in flight per QP (-o)
	// The workload knobs' axes (bench/spec/workload.go).
	AxisMRs    = "mrs"      // MRs the operations spread over (--mrs)
	AxisRegion = "region"   // bytes of the target region (--region)
	AxisSGE    = "sge"      // SGEs per work request (--sge)
	AxisIdle   = "idle_qps" // connected QPs that carry nothing (--qps-idle)
)

// Axes lists the axes, as --axis takes them (with - for _).
var Axes = []string{AxisQPs, AxisSize, AxisTxDepth, AxisOutReads, AxisMRs, AxisRegion, AxisSGE, AxisIdle}

// axisInfo is what the package knows of one axis: its default ladder and
// how a value reads with its unit.
type axisInfo struct {
	from, to int    // DefaultRange
	label    string // a value with its unit, a format for one int ("%d QPs")
}

var axisInfos = map[string]axisInfo{
	AxisQPs:      {1, 64, "%d QPs"},
	AxisSize:     {64, 64 << 10, "%d B"},
	AxisTxDepth:  {1, 1024, "depth %d"},
	AxisOutReads: {1, 16, "%d reads"},
	AxisMRs:      {1, 1024, "%d MRs"},
	AxisRegion:   {64 << 10, 64 << 20, "region %d B"},
	AxisSGE:      {1, 16, "%d SGEs"},
	AxisIdle:     {1, 256, "%d idle QPs"},
}

// ParseAxis reads an axis name: qps, size, tx-depth (tx_depth) or
// outstanding-reads (outstanding_reads), and the workload knobs' axes.
func ParseAxis(s string) (string, error) {
	a := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	if slices.Contains(Axes, a) {
		return a, nil
	}
	return "", fmt.Errorf("--axis %q unknown; valid: %s", s, strings.ReplaceAll(strings.Join(Axes, ", "), "_", "-"))
}

// DefaultRange is the ladder's default first and last value on axis.
func DefaultRange(axis string) (from, to int) {
	if a, ok := axisInfos[axis]; ok {
		return a.from, a.to
	}
	return 1, 64
}

// MaxLadder bounds the points of a ladder.
const MaxLadder = 64

// Ladder is the geometric ladder from, from·factor, ... up to to (to
// itself always included), each value an integer above the last.
func Ladder(from, to int, factor float64) ([]int, error) {
	switch {
	case from < 1:
		return nil, fmt.Errorf("--from %d: the ladder starts at 1 or above", from)
	case to <= from:
		return nil, fmt.Errorf("--to %d: must be above --from %d", to, from)
	case !(factor > 1 && factor <= 16):
		return nil, fmt.Errorf("--factor %g out of range (1, 16]", factor)
	}
	out := []int{from}
	for x := float64(from); ; {
		x *= factor
		v := int(math.Round(x))
		if v <= out[len(out)-1] {
			v = out[len(out)-1] + 1
			x = float64(v)
		}
		if v >= to {
			out = append(out, to)
			break
		}
		out = append(out, v)
		if len(out) > MaxLadder {
			return nil, fmt.Errorf("ladder %d..%d ×%g has more than %d points: raise --factor or narrow the range", from, to, factor, MaxLadder)
		}
	}
	return out, nil
}

// CheckPoints checks a --points list: at least 2 values, each at least 1,
// rising, at most MaxLadder.
func CheckPoints(vs []int) error {
	if len(vs) < 2 || len(vs) > MaxLadder {
		return fmt.Errorf("--points: %d values; want 2..%d", len(vs), MaxLadder)
	}
	for i, v := range vs {
		if v < 1 {
			return fmt.Errorf("--points: %d is below 1", v)
		}
		if i > 0 && v <= vs[i-1] {
			return fmt.Errorf("--points: %d after %d; values must rise", v, vs[i-1])
		}
	}
	return nil
}

// midpoint is the bisection point of (lo, hi): their geometric mean,
// rounded, strictly between them; ok false when there is none.
func midpoint(lo, hi int) (int, bool) {
	if hi-lo < 2 {
		return 0, false
	}
	m := int(math.Round(math.Sqrt(float64(lo) * float64(hi))))
	m = min(max(m, lo+1), hi-1)
	return m, true
}
