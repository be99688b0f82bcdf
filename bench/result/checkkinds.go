package result

// The checks of the other document kinds: mesh, cliffs, isolation, doctor
// and mr, as Document.Check checks a result document.

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Check checks a mesh document whole: its kind and version, pattern and
// outcome, each rank and pair (their statuses and indices), and each
// pair's results as Document.Check does.
func (d *MeshDocument) Check() error {
	var c checker
	c.header(d.Header(), KindMesh)
	c.oneOf("pattern", d.Pattern, []string{"pairs", "ring", "all-to-one", "bisection"}, "pattern", false)
	c.oneOf("outcome", d.Outcome, []string{MeshComplete, MeshPartial}, "outcome", false)
	c.listLen("ranks", len(d.Ranks))
	c.listLen("pairs", len(d.Pairs))
	n := len(d.Ranks)
	c.intWithin("root", int64(d.Root), 0, int64(max(n-1, 0)), "rank")
	c.intWithin("rounds", int64(d.Rounds), 0, MaxListLength, "round count")
	if len(d.Ranks) == 0 {
		c.fail("ranks", "no ranks: the document holds no mesh")
	}
	for i, r := range d.Ranks {
		p := fmt.Sprintf("ranks[%d]", i)
		if r.Rank != i {
			c.fail(p+".rank", "rank %d at index %d", r.Rank, i)
		}
		c.oneOf(p+".status", r.Status, []string{StatusOK, StatusFailed, StatusLost}, "status", false)
		if r.Env != nil {
			c.env(p+".environment", r.Env)
		}
	}
	seen := map[[3]int]int{}
	for i := range d.Pairs {
		pr := &d.Pairs[i]
		p := fmt.Sprintf("pairs[%d]", i)
		c.intWithin(p+".client", int64(pr.Client), 0, int64(n-1), "rank")
		c.intWithin(p+".server", int64(pr.Server), 0, int64(n-1), "rank")
		c.intWithin(p+".round", int64(pr.Round), 0, MaxListLength, "round")
		c.oneOf(p+".status", pr.Status, []string{StatusOK, StatusFailed}, "status", false)
		k := [3]int{pr.Round, pr.Client, pr.Server}
		if j, dup := seen[k]; dup {
			c.fail(p, "the pair %d→%d of round %d is also pairs[%d]", pr.Client, pr.Server, pr.Round, j)
		}
		seen[k] = i
		if pr.Env != nil {
			c.env(p+".environment", pr.Env)
		}
		if pr.Status == StatusOK && len(pr.Results) == 0 {
			c.fail(p+".results", "a pair that is ok has no results")
		}
		c.results(p+".results", pr.Results)
		if !c.ok() {
			break
		}
	}
	return c.err
}

// Check checks a cliffs document whole: its kind and version, the axis
// values, every point's runs and their median, min and max, the knees.
func (d *CliffsDocument) Check() error {
	var c checker
	c.header(d.Header(), KindCliffs)
	c.oneOf("figure_unit", d.FigureUnit, []string{"Mpps", "MB/s", "ns"}, "unit", false)
	c.intWithin("runs", int64(d.Runs), 1, MaxRuns, "run count")
	c.intWithin("run_duration_ns", d.RunDurationNS, 0, MaxDurationNS, "duration")
	c.intWithin("estimated_ns", d.EstimatedNS, 0, MaxDurationNS, "duration")
	c.intWithin("elapsed_ns", d.ElapsedNS, 0, MaxDurationNS, "duration")
	c.intWithin("max_points", int64(d.MaxPoints), 0, MaxListLength, "point count")
	c.intWithin("max_bisections", int64(d.MaxBisections), 0, MaxListLength, "bisection count")
	c.within("min_drop", d.MinDrop, 0, 1, "drop")
	c.within("confidence", d.Confidence, 0, 1, "confidence")
	c.listLen("ladder", len(d.Ladder))
	c.listLen("points", len(d.Points))
	c.listLen("knees", len(d.Knees))
	for i, v := range d.Ladder {
		c.intWithin(fmt.Sprintf("ladder[%d]", i), int64(v), 0, MaxSizeBytes, "axis value")
		if i > 0 && v <= d.Ladder[i-1] {
			c.fail(fmt.Sprintf("ladder[%d]", i), "%d follows %d: the ladder rises", v, d.Ladder[i-1])
		}
	}
	if len(d.Points) == 0 && !d.Partial {
		c.fail("points", "no points: the document holds no curve")
	}
	hi := MaxLatencyNS
	if d.FigureUnit != "ns" {
		hi = MaxMBPerSec
	}
	values := map[int]int{}
	for i, pt := range d.Points {
		p := fmt.Sprintf("points[%d]", i)
		c.intWithin(p+".value", int64(pt.Value), 0, MaxSizeBytes, "axis value")
		if j, dup := values[pt.Value]; dup {
			c.fail(p+".value", "%d is also points[%d]", pt.Value, j)
		}
		values[pt.Value] = i
		c.oneOf(p+".stage", pt.Stage, []string{StageLadder, StageBisection}, "stage", false)
		c.intWithin(p+".iterations", pt.Iterations, 0, MaxIterations, "iteration count")
		c.intWithin(p+".counter_iterations", pt.CounterIterations, 0, MaxIterations, "iteration count")
		if len(pt.Runs) == 0 || len(pt.Runs) > MaxRuns {
			c.fail(p+".runs", "%d runs: want 1 to %d", len(pt.Runs), MaxRuns)
		}
		for j, v := range pt.Runs {
			c.within(fmt.Sprintf("%s.runs[%d]", p, j), v, 0, hi, "figure")
		}
		c.within(p+".min", pt.Min, 0, hi, "figure")
		c.within(p+".median", pt.Median, pt.Min, hi, "median")
		c.within(p+".max", pt.Max, pt.Median, hi, "max")
		if c.ok() && len(pt.Runs) > 0 && (slices.Min(pt.Runs) != pt.Min || slices.Max(pt.Runs) != pt.Max) {
			c.fail(p+".min", "min %s and max %s are not those of the runs (%s..%s)", num(pt.Min), num(pt.Max), num(slices.Min(pt.Runs)), num(slices.Max(pt.Runs)))
		}
		if !c.ok() {
			break
		}
	}
	for i, k := range d.Knees {
		p := fmt.Sprintf("knees[%d]", i)
		if _, ok := values[k.Before]; !ok {
			c.fail(p+".before", "%d is not a point of the curve", k.Before)
		}
		if _, ok := values[k.After]; !ok {
			c.fail(p+".after", "%d is not a point of the curve", k.After)
		}
		if k.After <= k.Before {
			c.fail(p+".after", "%d is not after %d", k.After, k.Before)
		}
		c.within(p+".figure_before", k.FigureBefore, 0, hi, "figure")
		c.within(p+".figure_after", k.FigureAfter, 0, hi, "figure")
		c.within(p+".drop", k.Drop, -1e6, 1e6, "drop")
		for j, kc := range k.Counters {
			c.oneOf(fmt.Sprintf("%s.counters[%d].side", p, j), kc.Side, []string{"client", "server"}, "side", false)
		}
	}
	return c.err
}

// Check checks an isolation document whole: its kind and version, the
// victim's runs alone and attacked (percentiles in order, rates in range),
// the ratios' figures and intervals, the verdicts.
func (d *IsolationDocument) Check() error {
	var c checker
	c.header(d.Header(), KindIsolation)
	c.intWithin("repeat", int64(d.Repeat), 1, MaxRuns, "run count")
	c.intWithin("run_duration_ns", d.RunDurationNS, 0, MaxDurationNS, "duration")
	c.intWithin("estimated_ns", d.EstimatedNS, 0, MaxDurationNS, "duration")
	c.intWithin("elapsed_ns", d.ElapsedNS, 0, MaxDurationNS, "duration")
	c.within("confidence", d.Confidence, 0, 1, "confidence")
	c.listLen("alone", len(d.Alone))
	c.listLen("attackers", len(d.Attackers))
	if len(d.Alone) == 0 && !d.Partial {
		c.fail("alone", "no runs of the victim alone")
	}
	for i := range d.Alone {
		c.isolationRun(fmt.Sprintf("alone[%d]", i), &d.Alone[i])
	}
	for i := range d.Attackers {
		a := &d.Attackers[i]
		p := fmt.Sprintf("attackers[%d]", i)
		c.oneOf(p+".load.op", a.Load.Op, Ops, "op", true)
		c.intWithin(p+".load.qps", int64(a.Load.QPs), 0, MaxQPCount, "QP count")
		c.intWithin(p+".load.size_bytes", int64(a.Load.SizeBytes), 0, MaxSizeBytes, "message size")
		c.listLen(p+".runs", len(a.Runs))
		for j := range a.Runs {
			c.isolationRun(fmt.Sprintf("%s.runs[%d]", p, j), &a.Runs[j])
		}
		for j, r := range a.Ratios {
			c.ratio(fmt.Sprintf("%s.ratios[%d]", p, j), r)
		}
		if !c.ok() {
			break
		}
	}
	for i, b := range d.Bounds {
		c.oneOf(fmt.Sprintf("bounds[%d].figure", i), b.Figure, IsolationFigures, "figure", false)
		c.within(fmt.Sprintf("bounds[%d].max", i), b.Max, 0, 1e9, "bound")
	}
	for i, v := range d.Verdicts {
		p := fmt.Sprintf("verdicts[%d]", i)
		c.oneOf(p+".figure", v.Figure, IsolationFigures, "figure", false)
		c.oneOf(p+".verdict", v.Verdict, []string{VerdictPass, VerdictCrossed, VerdictUnknown}, "verdict", false)
	}
	return c.err
}

func (c *checker) isolationRun(p string, r *IsolationRun) {
	c.intWithin(p+".iterations", r.Iterations, 0, MaxIterations, "iteration count")
	c.within(p+".mpps", r.Mpps, 0, MaxMpps, "message rate")
	c.within(p+".mb_per_s", r.MBPerSec, 0, MaxMBPerSec, "rate")
	c.within(p+".max", r.Max, 0, MaxLatencyNS, "latency")
	seq := []named{{"p50", r.P50}, {"p90", r.P90}, {"p99", r.P99}, {"p99_9", r.P99_9}, {"p99_99", r.P99_99}}
	if r.Iterations == 0 {
		for _, s := range seq {
			if s.v.OK {
				c.fail(p+"."+s.name, "%s ns without iterations", num(s.v.NS))
			}
		}
	}
	if r.Max > 0 {
		seq = append(seq, named{"max", Nanos{r.Max, true}})
	}
	c.ordered(p, seq)
}

func (c *checker) ratio(p string, r InflationRatio) {
	c.oneOf(p+".figure", r.Figure, IsolationFigures, "figure", false)
	c.oneOf(p+".method", r.Method, []string{IntervalRuns, IntervalOrderStat, ""}, "method", true)
	for _, f := range []struct {
		name string
		v    *float64
	}{{"alone", r.Alone}, {"attacked", r.Attacked}, {"ratio", r.Ratio}, {"low", r.Low}, {"high", r.High}} {
		if f.v != nil {
			c.within(p+"."+f.name, *f.v, 0, 1e12, f.name)
		}
	}
	if r.Low != nil && r.High != nil && *r.High < *r.Low {
		c.fail(p+".high", "%s is below low's %s", num(*r.High), num(*r.Low))
	}
	c.intWithin(p+".alone_runs", int64(r.AloneRuns), 0, MaxRuns, "run count")
	c.intWithin(p+".attacked_runs", int64(r.AttackedRuns), 0, MaxRuns, "run count")
}

// DoctorStatuses are the statuses of a doctor check.
var DoctorStatuses = []string{DoctorPass, DoctorWarn, DoctorFail, DoctorUnknown}

// Check checks a doctor document: its kind and version, every finding's
// status, and that the document's status is the worst of them.
func (d *DoctorDocument) Check() error {
	var c checker
	c.header(d.Header(), KindDoctor)
	c.listLen("findings", len(d.Findings))
	for i, f := range d.Findings {
		c.oneOf(fmt.Sprintf("findings[%d].status", i), f.Status, DoctorStatuses, "status", false)
	}
	for i, f := range d.PeerFindings {
		c.oneOf(fmt.Sprintf("peer_findings[%d].status", i), f.Status, DoctorStatuses, "status", false)
	}
	type hostAt struct {
		p string
		h *DoctorHost
	}
	hosts := []hostAt{{"local", &d.Local}, {"peer", d.Peer}}
	c.listLen("ports", len(d.Ports))
	for i, p := range d.Ports {
		at := fmt.Sprintf("ports[%d]", i)
		c.intWithin(at+".rail", int64(p.Rail), 0, 1<<16, "rail")
		for j, f := range p.Findings {
			c.oneOf(fmt.Sprintf("%s.findings[%d].status", at, j), f.Status, DoctorStatuses, "status", false)
		}
		for j, f := range p.PeerFindings {
			c.oneOf(fmt.Sprintf("%s.peer_findings[%d].status", at, j), f.Status, DoctorStatuses, "status", false)
		}
		hosts = append(hosts, hostAt{at + ".local", &d.Ports[i].Local}, hostAt{at + ".peer", p.Peer})
	}
	c.oneOf("status", d.Status, DoctorStatuses, "status", false)
	if w := DoctorWorst(d.AllFindings()...); c.ok() && d.Status != w {
		c.fail("status", "%q, but the worst finding is %q", d.Status, w)
	}
	for _, h := range hosts {
		if h.h == nil {
			continue
		}
		c.intWithin(h.p+".port", int64(h.h.Port), 0, 255, "port")
		c.intWithin(h.p+".netdev_mtu", int64(h.h.NetdevMTU), 0, 1<<20, "MTU")
		c.intWithin(h.p+".active_mtu", int64(h.h.ActiveMTU), 0, 1<<20, "MTU")
	}
	return c.err
}

// mrSection is what CheckMR reads of an `rdmabench mr` document's "mr"
// member (bench/mr.Report, which needs cgo; its device capabilities are
// left out).
type mrSection struct {
	Iterations    int   `json:"iterations"`
	TimePerSizeNS int64 `json:"time_per_size_ns"`
	Registration  []struct {
		SizeBytes   int     `json:"size_bytes"`
		Iterations  int     `json:"iterations"`
		Reg         Latency `json:"reg_ns"`
		Dereg       Latency `json:"dereg_ns"`
		RegGBPerSec float64 `json:"reg_gb_per_s"`
	} `json:"registration"`
	Ops *struct {
		Op         string  `json:"op"`
		SizeBytes  int     `json:"size_bytes"`
		Iterations int     `json:"iterations"`
		Pooled     mrOp    `json:"pooled"`
		PerOp      mrOp    `json:"per_op"`
		Ratio      float64 `json:"pooled_over_per_op"`
	} `json:"ops"`
}

type mrOp struct {
	Mode       string    `json:"mode"`
	Latency    Latency   `json:"latency_ns"`
	DurationNS int64     `json:"duration_ns"`
	OpsPerSec  float64   `json:"ops_per_s"`
	Bandwidth  Bandwidth `json:"bandwidth"`
}

// CheckMR checks an `rdmabench mr` document (data) whole: the result
// document around it (Document.Check, role mr), each registration size's
// latencies, and the pooled and per-op figures.
func CheckMR(data []byte) error {
	var doc struct {
		Document
		MR *mrSection `json:"mr"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("mr document: %w", err)
	}
	if doc.MR == nil {
		return &ValueError{"mr", fmt.Errorf("%w: no mr section: not an mr document", ErrBadValue)}
	}
	var c checker
	c.document(&doc.Document)
	m := doc.MR
	c.intWithin("mr.iterations", int64(m.Iterations), 0, MaxIterations, "iteration count")
	c.intWithin("mr.time_per_size_ns", m.TimePerSizeNS, 0, MaxDurationNS, "duration")
	c.listLen("mr.registration", len(m.Registration))
	for i, r := range m.Registration {
		p := fmt.Sprintf("mr.registration[%d]", i)
		c.intWithin(p+".size_bytes", int64(r.SizeBytes), 1, 1<<50, "buffer size")
		c.intWithin(p+".iterations", int64(r.Iterations), 0, MaxIterations, "iteration count")
		c.latency(p+".reg_ns", &r.Reg)
		c.latency(p+".dereg_ns", &r.Dereg)
		c.within(p+".reg_gb_per_s", r.RegGBPerSec, 0, MaxMBPerSec, "rate")
	}
	if o := m.Ops; o != nil {
		c.oneOf("mr.ops.op", o.Op, Ops, "op", false)
		c.intWithin("mr.ops.size_bytes", int64(o.SizeBytes), 1, MaxSizeBytes, "message size")
		c.intWithin("mr.ops.iterations", int64(o.Iterations), 0, MaxIterations, "iteration count")
		for _, x := range []struct {
			p string
			o *mrOp
		}{{"mr.ops.pooled", &o.Pooled}, {"mr.ops.per_op", &o.PerOp}} {
			c.latency(x.p+".latency_ns", &x.o.Latency)
			c.intWithin(x.p+".duration_ns", x.o.DurationNS, 0, MaxDurationNS, "duration")
			c.within(x.p+".ops_per_s", x.o.OpsPerSec, 0, MaxMpps*1e6, "rate")
			c.bandwidth(x.p+".bandwidth", x.o.Bandwidth)
		}
		c.within("mr.ops.pooled_over_per_op", o.Ratio, 0, 1e9, "ratio")
	}
	return c.err
}

// Kinds are the document kinds KindOf names and CheckAny checks.
var Kinds = []string{KindResult, KindMesh, KindCliffs, KindIsolation, KindDoctor, KindMR}

// CheckAny decodes data as the kind of document it is (KindOf) and checks
// it whole with that kind's Check: the one validation step every reader
// of a document calls, whatever it then does with it. It returns the kind.
func CheckAny(data []byte) (string, error) {
	kind := KindOf(data)
	var err error
	switch kind {
	case KindResult:
		_, err = ParseDocument(data, "document")
	case KindMesh:
		_, err = ParseMesh(data, "document")
	case KindCliffs:
		_, err = ReadCliffs(data)
	case KindIsolation:
		_, err = ReadIsolation(data)
	case KindDoctor:
		_, err = ReadDoctor(data)
	case KindMR:
		err = CheckMR(data)
	default:
		err = &ValueError{"kind", fmt.Errorf("%w: kind %q is not one of %v", ErrBadValue, kind, Kinds)}
	}
	return kind, err
}
