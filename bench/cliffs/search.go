package cliffs

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/knee"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Defaults of Config.
const (
	DefaultRuns          = 3
	DefaultMaxBisections = 3
	// RefinedFalls is how many falls of the ladder the point budget
	// bisects; others are reported at the ladder's resolution.
	RefinedFalls = 2
	// DefaultPointOverhead is the estimated cost of one point beyond its
	// runs (the in-process server, the device, the control connection).
	DefaultPointOverhead = 2 * time.Second
	// DefaultRunOverhead is the estimated cost of one run beyond its
	// measured time (QPs, memory, connection, warm-up, the server's result).
	DefaultRunOverhead = 800 * time.Millisecond
	// DefaultQPOverhead is the estimated setup cost of one measured QP in
	// one run (both ends of it: create, connect, destroy), beyond
	// DefaultRunOverhead: what rxe took under TCG on a loaded host (about
	// 13 s a run of 256 QPs); hardware takes less.
	DefaultQPOverhead = 60 * time.Millisecond
	// RegionMiBOverhead is the estimated cost of mapping and registering
	// one MiB of a --region in one run: what a 1 GiB region took under
	// TCG (about 6 s), with room.
	RegionMiBOverhead = 8 * time.Millisecond
	// MROverhead is the estimated cost of registering and deregistering
	// one MR of a spread test (--mrs) on one side in one run: rxe under
	// TCG on a loaded host took about 1.5 ms.
	MROverhead = 2 * time.Millisecond
)

// Runner runs one point's test: s with Repeat set to the runs of the
// point, on fresh QPs each; it returns the combined result
// (result.CombineRuns) and the run's warnings.
type Runner func(ctx context.Context, s spec.Spec) (result.Result, []string, error)

// Config is one search.
type Config struct {
	Axis string
	// Ladder is the ladder's values, rising (Ladder or --points).
	Ladder []int
	// SpecAt is the test at axis value v, defaults applied and validated
	// (an error names the value and the limit).
	SpecAt func(v int) (spec.Spec, error)
	// Check holds every point's test against the device's and the memory
	// budget's limits before the first runs (nil: no check).
	Check func(specs []spec.Spec) error
	Run   Runner
	// Runs per point (0: DefaultRuns); MaxBisections bisection steps per
	// fall (0: none; -1 would be refused: use 0).
	Runs          int
	MaxBisections int
	// Figure is the figure judged: "mpps", "bw_mb_per_s", or a latency
	// statistic ("p50", "p99", "mean", ...); "": mpps for bandwidth tests,
	// p50 for latency tests.
	Figure     string
	MinDrop    float64 // 0: knee.DefaultMinDrop
	Confidence float64 // 0: knee.DefaultConfidence
	// Progress receives the plan line and the progress lines (nil: none);
	// with Terminal the progress line is redrawn in place.
	Progress io.Writer
	Terminal bool
	// Overheads of the time estimate (0: the defaults).
	PointOverhead, RunOverhead, QPOverhead time.Duration
	// The document's identity.
	Role, Peer, Device string
	CommandLine        []string
	ToolVersion        string
}

// point is a measured point.
type point struct {
	value int
	stage string
	res   result.Result
	runs  []float64
}

// FigureOf returns the figure named figure of each run of r, or an error
// naming the run where it is n/a.
func FigureOf(r result.Result, figure string) ([]float64, error) {
	runs := r.Runs
	if len(runs) == 0 {
		runs = []result.RunFigures{{Iterations: r.Iterations, DurationNS: r.DurationNS, Bandwidth: r.Bandwidth, Latency: r.Latency}}
	}
	out := make([]float64, 0, len(runs))
	for i, f := range runs {
		v, ok := f.RunFigure(figure)
		if !ok || !(v > 0) || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("run %d of %s: figure %s is n/a or 0 (too few samples? raise -n or -D, or pick --figure)", i+1, result.KeyOf(&r), figure)
		}
		out = append(out, v)
	}
	return out, nil
}

// figureOf picks the figure of spec s: Figure, or mpps for bandwidth and
// p50 for latency; its unit, and whether lower is better.
func figureOf(figure string, s spec.Spec) (string, string, bool, error) {
	if figure == "" {
		figure = "p50"
		if s.Mode == result.ModeBW {
			figure = "mpps"
		}
	}
	switch figure {
	case "mpps", "bw_mb_per_s":
		if s.Mode != result.ModeBW {
			return "", "", false, fmt.Errorf("--figure %s is a bandwidth test's figure; %s is a latency test (use p50, p99, mean, ...)", figure, s.Name())
		}
		if figure == "mpps" {
			return figure, "Mpps", false, nil
		}
		return figure, "MB/s", false, nil
	case "mean", "max":
		return figure, "ns", true, nil
	}
	if strings.HasPrefix(figure, "p") {
		return figure, "ns", true, nil
	}
	return "", "", false, fmt.Errorf("--figure %q unknown; valid: mpps, bw_mb_per_s (bandwidth tests), p50, p99, ..., mean, max", figure)
}

// estimate is the time one point of s is expected to take with runs runs.
func (c *Config) estimate(s spec.Spec, runs int) time.Duration {
	// idle QPs are set up as the measured ones are; a region is mapped and registered
	run := c.RunOverhead + time.Duration(s.NumQPs()+s.IdleQPs)*c.QPOverhead + time.Duration(s.RegionLen()>>20)*RegionMiBOverhead +
		s.Duration + s.WarmupTime
	if s.Spread() { // both sides register --mrs MRs
		run += time.Duration(2*s.NumMRs()) * MROverhead
	}
	return c.PointOverhead + time.Duration(runs)*run
}

// Search runs the search of cfg and returns its document. Every point's
// test is built and checked first; a point that exceeds a limit refuses
// the whole search with that point's error, before anything runs. An
// error after points ran returns the document so far, marked partial.
func Search(ctx context.Context, cfg Config) (*result.CliffsDocument, error) {
	c, ko, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	sr, err := c.plan(ctx, ko)
	if err != nil {
		return nil, err
	}
	ladder, err := sr.climb()
	if err != nil {
		return sr.finish(err)
	}
	return sr.finish(sr.refine(ladder))
}

// withDefaults is c with the defaults filled and the knee rule's options,
// or an error naming the value out of range.
func (c Config) withDefaults() (Config, knee.Options, error) {
	if c.Runs == 0 {
		c.Runs = DefaultRuns
	}
	if c.PointOverhead == 0 {
		c.PointOverhead = DefaultPointOverhead
	}
	if c.RunOverhead == 0 {
		c.RunOverhead = DefaultRunOverhead
	}
	if c.QPOverhead == 0 {
		c.QPOverhead = DefaultQPOverhead
	}
	ko := knee.Options{MinDrop: c.MinDrop, Confidence: c.Confidence}.WithDefaults()
	switch {
	case c.Runs < 1 || c.Runs > spec.MaxRepeat:
		return c, ko, fmt.Errorf("--runs %d out of range 1..%d", c.Runs, spec.MaxRepeat)
	case c.MaxBisections < 0 || c.MaxBisections > 20:
		return c, ko, fmt.Errorf("--bisect %d out of range 0..20", c.MaxBisections)
	case !(ko.MinDrop > 0 && ko.MinDrop < 1):
		return c, ko, fmt.Errorf("--min-drop %g out of range (0, 1)", ko.MinDrop)
	case !(ko.Confidence > 0 && ko.Confidence < 1):
		return c, ko, fmt.Errorf("confidence %g out of range (0, 1)", ko.Confidence)
	}
	return c, ko, CheckPoints(c.Ladder)
}

// search is one search under way: its config, the ladder's tests, the
// document it fills and the points measured so far.
type search struct {
	ctx    context.Context
	c      Config
	ko     knee.Options
	specs  map[int]spec.Spec // each ladder value's test, built and checked up front
	figure string
	falls  int // how many falls get bisected: RefinedFalls at most
	doc    *result.CliffsDocument
	pr     *progress
	pts    []point // every point measured, in order
}

// plan builds and checks every ladder value's test before the first runs
// (the limits rise with each axis: a bisection value between two ladder
// values that pass passes too; measure checks it again), picks the
// figure, estimates the time, starts the document and prints the plan.
func (c Config) plan(ctx context.Context, ko knee.Options) (*search, error) {
	specs := map[int]spec.Spec{}
	var all []spec.Spec
	for _, v := range c.Ladder {
		s, err := c.SpecAt(v)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", c.Axis, v, err)
		}
		specs[v] = s
		all = append(all, s)
	}
	s0 := specs[c.Ladder[0]]
	figure, unit, lower, err := figureOf(c.Figure, s0)
	if err != nil {
		return nil, err
	}
	ko.LowerIsBetter = lower
	if c.Check != nil {
		if err := c.Check(all); err != nil {
			return nil, err
		}
	}
	refine := min(RefinedFalls, len(c.Ladder)-1)
	maxPoints := len(c.Ladder) + c.MaxBisections*refine
	// the estimate: the ladder, and the most expensive step's bisections
	var est, worst time.Duration
	for _, v := range c.Ladder {
		e := c.estimate(specs[v], c.Runs)
		est += e
		worst = max(worst, e)
	}
	ladderEst := est
	est += time.Duration(c.MaxBisections*refine) * worst
	doc := &result.CliffsDocument{ToolVersion: c.ToolVersion, CommandLine: c.CommandLine, Start: time.Now(),
		Role: c.Role, Peer: c.Peer, Device: c.Device, Test: testName(s0, c.Axis), Axis: c.Axis, Figure: figure, FigureUnit: unit,
		LowerIsBetter: lower, Ladder: slices.Clone(c.Ladder), Runs: c.Runs, RunDurationNS: int64(s0.Duration),
		MaxBisections: c.MaxBisections, MaxPoints: maxPoints, MinDrop: ko.MinDrop, Confidence: ko.Confidence}
	timed := s0.Duration > 0
	if timed {
		doc.EstimatedNS = int64(est)
	}
	pr := &progress{w: c.Progress, term: c.Terminal, total: maxPoints, start: doc.Start, est: est, ladderEst: ladderEst, timed: timed}
	pr.plan(c, doc, figure)
	return &search{ctx: ctx, c: c, ko: ko, specs: specs, figure: figure, falls: refine, doc: doc, pr: pr}, nil
}

// measure runs the point at axis value v (a ladder value's test built up
// front, a bisection value's built and checked now), once more if it
// fails (a loaded host can make a peer miss its heartbeat), and records it.
func (sr *search) measure(v int, stage string) (point, error) {
	c, doc := sr.c, sr.doc
	s, ok := sr.specs[v]
	if !ok {
		var err error
		if s, err = c.SpecAt(v); err != nil {
			return point{}, fmt.Errorf("%s %d: %w", c.Axis, v, err)
		}
		if c.Check != nil {
			if err := c.Check([]spec.Spec{s}); err != nil {
				return point{}, err
			}
		}
	}
	s.Repeat = c.Runs
	sr.pr.point(len(sr.pts)+1, c.Axis, v, stage)
	r, warns, err := c.Run(sr.ctx, s)
	if err != nil && sr.ctx.Err() == nil {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s %d failed once, run again: %v", c.Axis, v, err))
		sr.pr.point(len(sr.pts)+1, c.Axis, v, stage+", again")
		r, warns, err = c.Run(sr.ctx, s)
	}
	for _, w := range warns { // every point says the same of the host
		if !slices.Contains(doc.Warnings, w) {
			doc.Warnings = append(doc.Warnings, w)
		}
	}
	if err != nil {
		return point{}, fmt.Errorf("%s %d: %w", c.Axis, v, err)
	}
	runs, err := FigureOf(r, sr.figure)
	if err != nil {
		return point{}, fmt.Errorf("%s %d: %w", c.Axis, v, err)
	}
	p := point{value: v, stage: stage, res: r, runs: runs}
	sr.pts = append(sr.pts, p)
	return p, nil
}

// climb measures the ladder, value by value. A failure ends the climb:
// the knees of the points measured so far go into the document.
func (sr *search) climb() ([]point, error) {
	var ladder []point
	for _, v := range sr.c.Ladder {
		p, err := sr.measure(v, result.StageLadder)
		if err != nil {
			if len(ladder) > 1 {
				sr.doc.Knees = kneesOf(ladder, sr.ko, sr.figure)
			}
			return ladder, err
		}
		ladder = append(ladder, p)
	}
	return ladder, nil
}

// refine finds the ladder's falls and bisects the first RefinedFalls of
// them, each at most MaxBisections times; every fall becomes a knee of
// the document (a fall left unbisected is named in a warning).
func (sr *search) refine(ladder []point) error {
	c, ko := sr.c, sr.ko
	steps, err := knee.Steps(kneePoints(ladder), ko)
	if err != nil {
		return err
	}
	refined := 0
	for i, st := range steps {
		if !knee.IsKnee(st, ko.MinDrop) {
			continue
		}
		lo, hi := ladder[i], ladder[i+1]
		if refined < sr.falls {
			refined++
			if lo, hi, err = sr.bisect(lo, hi); err != nil {
				sr.doc.Knees = append(sr.doc.Knees, kneeOf(lo, hi, ladder[i], ladder[i+1], ko, sr.figure))
				return err
			}
		} else {
			sr.doc.Warnings = append(sr.doc.Warnings, fmt.Sprintf("the fall between %s %d and %d is not bisected: the first %d falls took the point budget",
				c.Axis, lo.value, hi.value, sr.falls))
		}
		sr.doc.Knees = append(sr.doc.Knees, kneeOf(lo, hi, ladder[i], ladder[i+1], ko, sr.figure))
	}
	return nil
}

// bisect narrows the fall between lo and hi: up to MaxBisections
// midpoints, each keeping the half where the fall starts (the lower half
// first: a step lies in one half, a corner's fall in both), until no
// value lies between or the fall is spread over the bracket. It returns
// the bracket it reached, and on a failed point the bracket so far.
func (sr *search) bisect(lo, hi point) (point, point, error) {
	ko := sr.ko
	for k := 0; k < sr.c.MaxBisections; k++ {
		m, ok := midpoint(lo.value, hi.value)
		if !ok {
			break
		}
		mp, err := sr.measure(m, result.StageBisection)
		if err != nil {
			return lo, hi, err
		}
		left, _ := knee.Steps(kneePoints([]point{lo, mp}), ko)
		right, _ := knee.Steps(kneePoints([]point{mp, hi}), ko)
		switch {
		case knee.IsKnee(left[0], ko.MinDrop):
			hi = mp
		case knee.IsKnee(right[0], ko.MinDrop):
			lo = mp
		default: // the fall is spread over the bracket: keep it
			return lo, hi, nil
		}
	}
	return lo, hi, nil
}

// finish ends the document: the points in axis order, the times, and on
// err the mark partial; with no knee found, how far up there is none.
func (sr *search) finish(err error) (*result.CliffsDocument, error) {
	doc, pts := sr.doc, sr.pts
	sr.pr.done()
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].value < pts[j].value })
	for _, p := range pts {
		doc.Points = append(doc.Points, docPoint(p))
	}
	doc.End = time.Now()
	doc.ElapsedNS = int64(doc.End.Sub(doc.Start))
	if err != nil {
		doc.Partial = true
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("incomplete: %v", err))
	}
	if len(doc.Knees) == 0 && len(pts) > 0 {
		up := pts[len(pts)-1].value
		doc.NoKneeUpTo = &up
	}
	return doc, err
}

// testName is s's name without the axis value: "write bw 64B" for the QP
// axis, "write bw" for the size axis.
func testName(s spec.Spec, axis string) string {
	if axis == AxisSize {
		return s.Op + " " + s.Mode
	}
	n := s.Name()
	if s.NumQPs() > 1 && axis != AxisQPs {
		n += fmt.Sprintf(" %d QPs", s.NumQPs())
	}
	return n
}

func kneePoints(ps []point) []knee.Point {
	out := make([]knee.Point, len(ps))
	for i, p := range ps {
		out[i] = knee.Point{X: float64(p.value), Runs: p.runs}
	}
	return out
}

// kneesOf is the knees of the ladder points ps at the ladder's resolution.
func kneesOf(ps []point, ko knee.Options, figure string) []result.CliffsKnee {
	steps, err := knee.Steps(kneePoints(ps), ko)
	if err != nil {
		return nil
	}
	var out []result.CliffsKnee
	for i, st := range steps {
		if knee.IsKnee(st, ko.MinDrop) {
			out = append(out, kneeOf(ps[i], ps[i+1], ps[i], ps[i+1], ko, figure))
		}
	}
	return out
}

// kneeOf is the knee between lo and hi, found in the ladder step la..lb.
func kneeOf(lo, hi, la, lb point, ko knee.Options, figure string) result.CliffsKnee {
	st, _ := knee.Steps(kneePoints([]point{lo, hi}), ko)
	s := st[0]
	k := result.CliffsKnee{Before: lo.value, After: hi.value, FigureBefore: s.FigureBefore, FigureAfter: s.FigureAfter,
		Drop: s.Drop, LadderBefore: la.value, LadderAfter: lb.value, Counters: movedCounters(lo, hi)}
	if s.CIOK {
		k.DropCI = &result.DropInterval{Low: s.DropLow, High: s.DropHigh}
	}
	return k
}

func docPoint(p point) result.CliffsPoint {
	r := p.res
	out := result.CliffsPoint{Value: p.value, Stage: p.stage, Runs: p.runs, Median: knee.Median(p.runs),
		Min: slices.Min(p.runs), Max: slices.Max(p.runs), Iterations: r.Iterations}
	if c := r.Counters; c != nil && (c.Client != nil || c.Server != nil) {
		out.Counters = &result.CliffsCounters{}
		if c.Client != nil {
			out.Counters.Client = c.Client.Deltas
		}
		if c.Server != nil {
			out.Counters.Server = c.Server.Deltas
		}
		out.CounterIterations = counterIterations(r)
	}
	return out
}

// counterIterations is the measured operations of the run the counters
// cover: the first.
func counterIterations(r result.Result) int64 {
	if len(r.Runs) > 0 {
		return r.Runs[0].Iterations
	}
	return r.Iterations
}

// Counters that move by less than this per operation, or less than
// minCounterDelta in all, are not said to have moved.
const (
	minCounterChange = 0.25 // relative change of the rate per operation
	minCounterDelta  = 10
	maxKneeCounters  = 12
)

// movedCounters lists the counters whose rate per operation changed from
// lo to hi by at least minCounterChange: trouble counters first, then by
// the size of the change.
func movedCounters(lo, hi point) []result.CliffsCounter {
	out := []result.CliffsCounter{}
	a, b := lo.res.Counters, hi.res.Counters
	if a == nil || b == nil {
		return out
	}
	na, nb := float64(max(counterIterations(lo.res), 1)), float64(max(counterIterations(hi.res), 1))
	side := func(name string, pa, pb *result.PortCounters) {
		if pa == nil || pb == nil {
			return
		}
		keys := map[string]bool{}
		for k := range pa.Deltas {
			keys[k] = true
		}
		for k := range pb.Deltas {
			keys[k] = true
		}
		for k := range keys {
			da, db := pa.Deltas[k], pb.Deltas[k]
			if max(da, db) < minCounterDelta {
				continue
			}
			ra, rb := float64(da)/na, float64(db)/nb
			if math.Abs(rb-ra) < minCounterChange*math.Max(ra, rb) {
				continue
			}
			out = append(out, result.CliffsCounter{Side: name, Name: k, PerOpBefore: ra, PerOpAfter: rb,
				Trouble: result.CounterCategory(k)})
		}
	}
	side("client", a.Client, b.Client)
	side("server", a.Server, b.Server)
	change := func(c result.CliffsCounter) float64 {
		return math.Abs(c.PerOpAfter-c.PerOpBefore) / math.Max(math.Max(c.PerOpAfter, c.PerOpBefore), 1e-12)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := out[i].Trouble != "", out[j].Trouble != ""
		if ti != tj {
			return ti
		}
		if ci, cj := change(out[i]), change(out[j]); ci != cj {
			return ci > cj
		}
		return out[i].Side+out[i].Name < out[j].Side+out[j].Name
	})
	if len(out) > maxKneeCounters {
		out = out[:maxKneeCounters]
	}
	return out
}
