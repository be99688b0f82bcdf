package cliffs

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestAxisTable: each axis' row sets its value in the search's test, and
// in nothing else: the Spec field the axis is, read back from SpecAt at two
// values; a copy of the plan is left as it was.
func TestAxisTable(t *testing.T) {
	field := map[string]func(s spec.Spec) int{
		AxisQPs:      func(s spec.Spec) int { return s.QPs },
		AxisSize:     func(s spec.Spec) int { return s.Size },
		AxisTxDepth:  func(s spec.Spec) int { return s.TxDepth },
		AxisOutReads: func(s spec.Spec) int { return s.OutstandingReads },
		AxisMRs:      func(s spec.Spec) int { return s.MRs },
		AxisRegion:   func(s spec.Spec) int { return int(s.Region) },
		AxisSGE:      func(s spec.Spec) int { return s.SGE },
		AxisIdle:     func(s spec.Spec) int { return s.IdleQPs },
	}
	if len(field) != len(AxisTable) {
		t.Fatalf("%d axes, the test knows %d", len(AxisTable), len(field))
	}
	seen := map[string]bool{}
	for _, a := range AxisTable {
		get := field[a.Name]
		if get == nil || seen[a.Flag] || a.Flag == "" || a.From < 1 || a.To <= a.From || a.Set == nil {
			t.Errorf("%s: row %+v", a.Name, a)
			continue
		}
		seen[a.Flag] = true
		mk := func() spec.Plan {
			p := spec.Plan{Template: spec.Spec{Duration: time.Second}, Ops: []string{a.DefaultOp()}, Modes: []string{DefaultMode}, Sizes: []int{DefaultSize}}
			if a.Name == AxisRegion || a.Name == AxisMRs || a.Name == AxisSGE {
				p.Template.Region = 1 << 20
			}
			return p
		}
		plan := mk()
		for _, v := range []int{2 * a.From, 4 * a.From} {
			s, err := a.SpecAt(plan, v)
			if err != nil {
				t.Errorf("%s %d: %v", a.Name, v, err)
				continue
			}
			if got := get(s); got != v {
				t.Errorf("%s %d: the test has %d", a.Name, v, got)
			}
		}
		if !reflect.DeepEqual(plan, mk()) {
			t.Errorf("%s: SpecAt changed the plan it was given", a.Name)
		}
	}
}

// TestAxisLoadTxDepth: along the send queue depth, a load's streams take
// the depth too (as -t gives both), and the plan's load is not shared.
func TestAxisLoadTxDepth(t *testing.T) {
	a, _ := AxisOf(AxisTxDepth)
	load := &spec.Load{QPs: 2, Op: result.OpWrite, Size: 4096, TxDepth: 8}
	p := spec.Plan{Template: spec.Spec{Load: load}}
	a.Set(&p, 32)
	if p.Template.TxDepth != 32 || p.Template.Load.TxDepth != 32 || load.TxDepth != 8 {
		t.Errorf("tx depth %d, the load's %d, the shared load's %d; want 32, 32, 8", p.Template.TxDepth, p.Template.Load.TxDepth, load.TxDepth)
	}
}

// TestSpecAtRefuses: a search measures one RDMA test without a load sweep.
func TestSpecAtRefuses(t *testing.T) {
	a, _ := AxisOf(AxisQPs)
	for _, c := range []struct {
		plan spec.Plan
		want string
	}{
		{spec.Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeBW}}, "cliffs measures one test along the axis; --op send,write --mode bw make 2: give one of each"},
		{spec.Plan{Template: spec.Spec{QPType: result.QPTypeUC}, Modes: []string{result.ModeBW}}, "--op send,write --mode bw make 2"},
		{spec.Plan{Template: spec.Spec{Transport: result.TransportTCP}, Ops: []string{result.OpSend}, Modes: []string{result.ModeBW}}, "cliffs measures RDMA tests: drop --transport tcp"},
		{spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}}, ""},
	} {
		_, err := a.SpecAt(c.plan, 1)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.plan, err, c.want)
		}
	}
}

func TestParseAxis(t *testing.T) {
	for in, want := range map[string]string{"qps": AxisQPs, "TX-Depth": AxisTxDepth, " outstanding_reads ": AxisOutReads, "idle-qps": AxisIdle} {
		if a, err := ParseAxis(in); err != nil || a.Name != want {
			t.Errorf("ParseAxis(%q) = %v, %v; want %s", in, a.Name, err, want)
		}
	}
	if _, err := ParseAxis("qps-idle"); err == nil || !strings.Contains(err.Error(), "valid: qps, size, tx-depth, outstanding-reads, mrs, region, sge, idle-qps") {
		t.Errorf("ParseAxis(qps-idle): %v", err)
	}
	if got := AxisArgs(); got != "qps, size, tx-depth, outstanding-reads, mrs, region, sge or idle-qps" {
		t.Errorf("AxisArgs() = %q", got)
	}
	size, _ := AxisOf(AxisSize)
	depth, _ := AxisOf(AxisTxDepth)
	if size.Format(64<<10) != "64K" || depth.Format(1024) != "1024" {
		t.Errorf("Format: %s, %s", size.Format(64<<10), depth.Format(1024))
	}
}
