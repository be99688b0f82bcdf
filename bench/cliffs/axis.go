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
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The axes, as the document names them (--axis takes them with - for _).
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

// Axis is one axis a search runs along: the one table of them (AxisTable)
// holds everything that differs between axes.
type Axis struct {
	Name string // AxisQPs, ...
	// Flag is the test flag that sets the axis' value (without --): a
	// search along the axis takes its values from the ladder instead.
	Flag string
	// From and To are the ladder's default first and last value (the
	// flags --from and --to).
	From, To int
	// Bytes says the axis' values are byte counts (size, region): the
	// flags show them with K, M (report.SizeLabel).
	Bytes bool
	// Label is a value with its unit, a format of one int ("%d QPs").
	Label string
	// Set sets the axis' value v in the plan of the search's test: a
	// Spec field of its template (or, for the size, its one size). It
	// never changes what the plan shares with a copy of it.
	Set func(p *spec.Plan, v int)
}

// AxisTable is every axis, in the order --axis lists them.
var AxisTable = []Axis{
	{AxisQPs, "qps", 1, 64, false, "%d QPs", func(p *spec.Plan, v int) { p.Template.QPs = v }},
	{AxisSize, "size", 64, 64 << 10, true, "%d B", func(p *spec.Plan, v int) { p.Sizes = []int{v} }},
	{AxisTxDepth, "tx-depth", 1, 1024, false, "depth %d", func(p *spec.Plan, v int) {
		p.Template.TxDepth = v
		if l := p.Template.Load; l != nil { // a load's streams take -t too
			c := *l
			c.TxDepth = v
			p.Template.Load = &c
		}
	}},
	{AxisOutReads, "outstanding-reads", 1, 16, false, "%d reads", func(p *spec.Plan, v int) { p.Template.OutstandingReads = v }},
	{AxisMRs, "mrs", 1, 1024, false, "%d MRs", func(p *spec.Plan, v int) { p.Template.MRs = v }},
	{AxisRegion, "region", 64 << 10, 64 << 20, true, "region %d B", func(p *spec.Plan, v int) { p.Template.Region = int64(v) }},
	{AxisSGE, "sge", 1, 16, false, "%d SGEs", func(p *spec.Plan, v int) { p.Template.SGE = v }},
	{AxisIdle, "qps-idle", 1, 256, false, "%d idle QPs", func(p *spec.Plan, v int) { p.Template.IdleQPs = v }},
}

// Axes lists the axes' names, in AxisTable's order.
var Axes = func() []string {
	out := make([]string, len(AxisTable))
	for i, a := range AxisTable {
		out[i] = a.Name
	}
	return out
}()

// AxisOf returns the axis named name (a document's axis), ok false for
// none.
func AxisOf(name string) (Axis, bool) {
	for _, a := range AxisTable {
		if a.Name == name {
			return a, true
		}
	}
	return Axis{}, false
}

// Arg is the axis' name as --axis takes it: "tx-depth".
func (a Axis) Arg() string { return strings.ReplaceAll(a.Name, "_", "-") }

// Format is v as the flags take it: "64K" for 65536 on an axis of bytes.
func (a Axis) Format(v int) string {
	if a.Bytes {
		return report.SizeLabel(int64(v))
	}
	return strconv.Itoa(v)
}

// AxisArgs lists the axes as --axis takes them: "qps, size, ... or
// idle-qps".
func AxisArgs() string {
	args := make([]string, len(AxisTable))
	for i, a := range AxisTable {
		args[i] = a.Arg()
	}
	return strings.Join(args[:len(args)-1], ", ") + " or " + args[len(args)-1]
}

// ParseAxis reads an axis as --axis takes it: qps, size, tx-depth
// (tx_depth), outstanding-reads (outstanding_reads), and the workload
// knobs' axes; any case.
func ParseAxis(s string) (Axis, error) {
	if a, ok := AxisOf(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")); ok {
		return a, nil
	}
	return Axis{}, fmt.Errorf("--axis %q unknown; valid: %s", s, strings.ReplaceAll(strings.Join(Axes, ", "), "_", "-"))
}

// The search's test where the flags do not say otherwise: 64 B WRITE
// bandwidth (READ along the outstanding reads), each run 1 s.
const (
	DefaultMode     = result.ModeBW
	DefaultSize     = 64 // a message rate: small messages (an axis other than the size)
	DefaultDuration = time.Second
)

// DefaultOp is the search's op where the flags name none: WRITE, or READ
// along the outstanding reads (which only READ and atomics have).
func (a Axis) DefaultOp() string {
	if a.Name == AxisOutReads {
		return result.OpRead
	}
	return result.OpWrite
}

// SpecAt is the search's test at value v along a (Config.SpecAt): plan,
// the flags' test, with the axis' value set, expanded and validated
// (spec.Plan.Specs). It must be one RDMA test without a load sweep: a
// search measures one test along one axis.
func (a Axis) SpecAt(plan spec.Plan, v int) (spec.Spec, error) {
	a.Set(&plan, v)
	specs, err := plan.Specs()
	if err != nil {
		return spec.Spec{}, err
	}
	if len(specs) != 1 {
		var ops, modes []string
		for _, s := range specs {
			if !slices.Contains(ops, s.Op) {
				ops = append(ops, s.Op)
			}
			if !slices.Contains(modes, s.Mode) {
				modes = append(modes, s.Mode)
			}
		}
		return spec.Spec{}, fmt.Errorf("cliffs measures one test along the axis; --op %s --mode %s make %d: give one of each",
			strings.Join(ops, ","), strings.Join(modes, ","), len(specs))
	}
	if specs[0].Transport == result.TransportTCP {
		return spec.Spec{}, errors.New("cliffs measures RDMA tests: drop --transport tcp")
	}
	if len(specs[0].LoadSweep) > 0 {
		return spec.Spec{}, errors.New("cliffs runs one test a point: drop --load-sweep")
	}
	return specs[0], nil
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
