package isolation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The rounds: each round runs the victim alone, then beside each attacker
// in turn, every test on fresh QPs of the same device and port, one round
// in one session (Runner), so that slow drift of the host touches alone and
// attacked runs alike.

// Estimates of the plan line.
const (
	// RoundOverhead is the estimated cost of one round beyond its tests:
	// the in-process server or the session, both environments.
	RoundOverhead = 3 * time.Second
	// RunOverhead is the estimated cost of one test beyond its measured
	// time: QPs, memory, warm-up, the server's result.
	RunOverhead = 1500 * time.Millisecond
	// QPOverhead is the estimated setup cost of one load QP in a run.
	QPOverhead = 60 * time.Millisecond
	// MROverhead is the estimated cost of registering (and later
	// deregistering) one load MR on one side in a run (mr-thrash: 4096 a
	// side): rxe under TCG on a loaded host took about 2 ms.
	MROverhead = time.Millisecond
	// MaxRepeat bounds Config.Repeat.
	MaxRepeat = 100
)

// Config is one isolation measurement.
type Config struct {
	// Victim is the victim's test: an RDMA latency test without load.
	Victim    spec.Spec
	Attackers []Attacker
	Repeat    int // rounds, 1..MaxRepeat
	// Check checks every test against the budgets and the device's limits
	// before anything runs (nil: none).
	Check  func([]spec.Spec) error
	Run    Runner
	Bounds []result.InflationBound
	// Progress gets the plan line and one line a run (nil: none).
	Progress           io.Writer
	Role, Peer, Device string
	CommandLine        []string
	ToolVersion        string
	Confidence         float64 // of every interval (0: 0.95)
	estimate           time.Duration
	victimSpec         spec.Spec
	attackedSpecs      []spec.Spec
}

// Specs builds the victim's test alone and beside each attacker, defaults
// filled and validated: an error names the attacker and the limit.
func (c *Config) Specs() (alone spec.Spec, attacked []spec.Spec, err error) {
	v := c.Victim
	if v.Transport == result.TransportTCP {
		return v, nil, errors.New("isolation measures an RDMA victim: drop --transport tcp")
	}
	if v.Mode != result.ModeLat {
		return v, nil, fmt.Errorf("the victim is a latency test, not %s %s: use --mode lat", v.Op, v.Mode)
	}
	if v.Load != nil || len(v.LoadSweep) > 0 {
		return v, nil, errors.New("the attackers are the victim's load: drop --load-qps and --load-sweep")
	}
	if len(c.Attackers) == 0 {
		return v, nil, errors.New("isolation needs at least one attacker")
	}
	if c.Repeat < 1 || c.Repeat > MaxRepeat {
		return v, nil, fmt.Errorf("--repeat %d out of range 1..%d", c.Repeat, MaxRepeat)
	}
	alone = v.WithDefaults()
	if err := alone.Validate(); err != nil {
		return v, nil, fmt.Errorf("victim %s: %w", alone.Name(), err)
	}
	for _, a := range c.Attackers {
		s := v
		l := a.Load
		s.Load = &l
		s = s.WithDefaults()
		if err := s.Validate(); err != nil {
			return v, nil, fmt.Errorf("attacker %s beside %s: %w", a.Name, alone.Name(), err)
		}
		attacked = append(attacked, s)
	}
	return alone, attacked, nil
}

// Plan checks cfg and returns the runs and the estimated time, before
// anything runs.
func (c *Config) Plan() (runs int, est time.Duration, err error) {
	alone, attacked, err := c.Specs()
	if err != nil {
		return 0, 0, err
	}
	if c.Check != nil {
		if err := c.Check(append([]spec.Spec{alone}, attacked...)); err != nil {
			return 0, 0, err
		}
	}
	one := func(s spec.Spec) time.Duration {
		d := RunOverhead + s.Duration + s.WarmupTime
		if s.Load != nil {
			d += time.Duration(s.Load.QPs)*QPOverhead + time.Duration(2*s.Load.MRs)*MROverhead // both sides' MRs
		}
		return d
	}
	per := RoundOverhead + one(alone)
	for _, s := range attacked {
		per += one(s)
	}
	c.victimSpec, c.attackedSpecs = alone, attacked
	c.estimate = time.Duration(c.Repeat) * per
	return c.Repeat * (1 + len(attacked)), c.estimate, nil
}

// Run measures cfg and returns its document. Nothing runs when a test is
// refused (nil document). A round that fails runs once more, with a
// warning (a loaded host can make a peer miss its deadline); a second
// failure returns the document of the rounds before it, marked partial,
// and the error; the bounds' outcome (CrossedError,
// UnjudgedError) comes back as the error of a complete measurement.
func Run(ctx context.Context, cfg Config) (*result.IsolationDocument, error) {
	c := cfg
	if c.Confidence == 0 {
		c.Confidence = 0.95
	}
	runs, est, err := c.Plan()
	if err != nil {
		return nil, err
	}
	doc := &result.IsolationDocument{ToolVersion: c.ToolVersion, CommandLine: c.CommandLine, Start: time.Now(), Role: c.Role,
		Peer: c.Peer, Device: c.Device, Victim: c.victimSpec.Name(), VictimInterval: c.victimSpec.TimedInterval(), Repeat: c.Repeat,
		RunDurationNS: int64(c.victimSpec.Duration), Confidence: c.Confidence, EstimatedNS: int64(est), Bounds: c.Bounds}
	names := make([]string, len(c.Attackers))
	for i, a := range c.Attackers {
		names[i] = a.Name
		doc.Attackers = append(doc.Attackers, result.IsolationAttacker{Name: a.Name, Class: a.Class, Description: a.Description,
			Load: loadOf(*c.attackedSpecs[i].Load)})
	}
	progress(c.Progress, "isolation: %s alone and beside %d attacker%s (%s), %d round%s: %d runs, about %s\n",
		doc.Victim, len(names), plural(len(names)), strings.Join(names, ", "), c.Repeat, plural(c.Repeat), runs, est.Round(time.Second))
	round := func(r int) ([]result.Result, error) {
		progress(c.Progress, "isolation: round %d/%d: alone, then beside %s\n", r, c.Repeat, strings.Join(names, ", "))
		specs := append([]spec.Spec{c.victimSpec}, c.attackedSpecs...)
		rs, warns, err := c.Run(ctx, specs)
		if err != nil && ctx.Err() == nil { // once more: a loaded host can make a peer miss its deadline
			warns = append(warns, fmt.Sprintf("round %d: failed (%v); ran it once more", r, err))
			var again []string
			rs, again, err = c.Run(ctx, specs)
			warns = append(warns, again...)
		}
		for _, w := range warns { // each round repeats the environment's warnings: once each
			if !slices.Contains(doc.Warnings, w) {
				doc.Warnings = append(doc.Warnings, w)
			}
		}
		if err == nil && len(rs) != len(specs) {
			err = fmt.Errorf("%d results for %d tests", len(rs), len(specs))
		}
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", r, err)
		}
		return rs, nil
	}
	finish := func(err error) (*result.IsolationDocument, error) {
		doc.End = time.Now()
		doc.ElapsedNS = int64(doc.End.Sub(doc.Start))
		for i := range doc.Attackers {
			a := &doc.Attackers[i]
			a.AchievedMedian = medianRate(a.Achieved)
			a.Ratios = Ratios(doc.Alone, a.Runs, c.Confidence)
		}
		if err != nil {
			doc.Partial = true
			return doc, err
		}
		if len(c.Bounds) > 0 {
			doc.Verdicts = Judge(doc, c.Bounds)
			return doc, Outcome(doc.Verdicts)
		}
		return doc, nil
	}
	for r := 1; r <= c.Repeat; r++ {
		rs, err := round(r)
		if err != nil {
			return finish(err)
		}
		doc.Alone = append(doc.Alone, runOf(r, rs[0]))
		thin(doc, r, "alone", rs[0])
		for i := range doc.Attackers {
			a := &doc.Attackers[i]
			a.Runs = append(a.Runs, runOf(r, rs[i+1]))
			thin(doc, r, "beside "+a.Name, rs[i+1])
			a.Achieved = append(a.Achieved, rateOf(rs[i+1]))
		}
	}
	return finish(nil)
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// thin warns of a victim run too short for its p50 (every percentile
// n/a): it counts in no ratio.
func thin(doc *result.IsolationDocument, round int, what string, r result.Result) {
	if !r.Latency.P50.OK {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("round %d, %s: %d samples, too few for a p50: the run counts in no ratio (a loaded host? lengthen -D)",
			round, what, r.Latency.Count))
	}
}
