package expect

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The verdicts of one bound.
const (
	Pass       = "pass"
	Fail       = "fail"
	CannotTell = "cannot tell"
)

// Confidence is the level of every interval the rule judges by.
const Confidence = 0.95

// MaxSuggestRepeat is the most --repeat a verdict suggests; SingleRunRepeat
// the --repeat suggested to a single bandwidth run, which has no spread to
// size it from.
const (
	MaxSuggestRepeat = 50
	SingleRunRepeat  = 5
)

// Verdict is one bound judged on one test.
type Verdict struct {
	Test   string  // "write bw 64K"
	Figure string  // "bw" or a percentile, "p50"
	Bound  string  // the expectation as given: "90%", "p50=2.5us"
	Limit  float64 // the bound: Gb/s (floor) for bw, ns (ceiling) for a percentile
	// Reference names the rate a fractional bw bound is of: "90% of 100
	// Gb/s, rxe0 port 1's data rate as the device reports it".
	Reference string
	Value     float64 // the figure: the median of the runs, Gb/s or ns
	Low, High float64 // its interval; both 0 when it has none
	Interval  bool    // Low and High hold an interval
	Runs      int     // runs behind it
	Method    string  // how the interval was made: "order statistics", "t over N runs"
	Verdict   string  // Pass, Fail or CannotTell
	// Repeat is the --repeat that would settle a CannotTell verdict at the
	// figures seen (0: none up to MaxSuggestRepeat would, or no estimate).
	Repeat int
	Note   string // why a CannotTell verdict could not be judged, or the fix
}

// String is v on one line, e.g. "write bw 64K: bw >= 90.00 Gb/s (90% of
// ...): PASS: 95.10 Gb/s, 95% interval 94.20..96.00 (t over 5 runs)".
func (v Verdict) String() string {
	unit, val := " Gb/s", fmtGbps
	op := ">="
	if v.Figure != "bw" {
		unit, op = "", "<="
		val = fmtNS
	}
	s := fmt.Sprintf("%s: %s %s %s%s (%s", v.Test, v.Figure, op, val(v.Limit), unit, v.Bound)
	if v.Reference != "" {
		s += " of " + v.Reference
	}
	s += "): " + strings.ToUpper(v.Verdict)
	if v.Runs > 0 {
		s += ": " + val(v.Value) + unit
		if v.Interval {
			s += fmt.Sprintf(", %g%% interval %s..%s%s (%s)", Confidence*100, val(v.Low), val(v.High), unit, v.Method)
		}
	}
	if v.Verdict == CannotTell {
		switch {
		case v.Note != "":
			s += ": " + v.Note
		case v.Repeat > 0:
			s += fmt.Sprintf(": the interval straddles the bound; --repeat %d would settle it", v.Repeat)
		default:
			s += fmt.Sprintf(": the interval straddles the bound; not even --repeat %d would settle it (the figure sits at the bound)", MaxSuggestRepeat)
		}
	}
	return s
}

// fmtGbps is a rate in Gb/s with at least three significant digits: 375.0,
// 95.10, 0.00714.
func fmtGbps(g float64) string {
	switch {
	case g >= 100:
		return fmt.Sprintf("%.1f", g)
	case g >= 1:
		return fmt.Sprintf("%.2f", g)
	}
	return fmt.Sprintf("%.3g", g)
}

func fmtNS(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3gms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3gus", ns/1e3)
	}
	return fmt.Sprintf("%.4gns", ns)
}

// PortRate is the rate a fractional bandwidth bound is of, Gb/s, and its
// description: the port's data rate after line encoding (LinkDataGbps),
// else its nominal rate; a soft device's is the nominal rate it reports.
// ok is false when env names no rate.
func PortRate(env *result.Env) (gbps float64, ref string, ok bool) {
	if env == nil {
		return 0, "", false
	}
	what := "data rate after line encoding"
	gbps = env.LinkDataGbps
	if !(gbps > 0) {
		gbps, what = env.LinkGbps, "nominal link rate"
	}
	if !(gbps > 0) {
		return 0, "", false
	}
	ref = fmt.Sprintf("%g Gb/s, %s port %d's %s", gbps, env.Device, env.Port, what)
	if env.SoftwareRDMA {
		ref += " (a software device: the nominal rate it reports)"
	}
	return gbps, ref, true
}

// Judge judges e on every test of doc: the bw bound on bandwidth tests,
// the latency bounds on latency tests, in the document's order.
func Judge(doc *result.Document, e Expectations) []Verdict {
	var out []Verdict
	for i := range doc.Results {
		out = append(out, JudgeResult(&doc.Results[i], &doc.Env, e)...)
	}
	return out
}

// JudgeResult judges e on one test r, env being its side's environment
// (for the port rate of a fractional bw bound).
func JudgeResult(r *result.Result, env *result.Env, e Expectations) []Verdict {
	test := result.KeyOf(r).String()
	var out []Verdict
	switch r.Mode {
	case result.ModeBW:
		if e.BW == nil {
			break
		}
		v := Verdict{Test: test, Figure: "bw", Bound: e.BW.Text, Limit: e.BW.Gbps}
		if e.BW.Fraction > 0 {
			rate, ref, ok := PortRate(env)
			if !ok {
				v.Verdict, v.Note = CannotTell, "the port reports no rate to take "+e.BW.Text+" of; give an absolute rate (375Gb/s)"
				out = append(out, v)
				break
			}
			v.Limit, v.Reference = e.BW.Fraction*rate, ref
		}
		var vals []float64
		for _, f := range r.Runs {
			if f.Iterations > 0 {
				vals = append(vals, f.Bandwidth.GbitPerSec)
			}
		}
		if len(r.Runs) == 0 && r.Iterations > 0 {
			vals = append(vals, r.Bandwidth.GbitPerSec)
		}
		out = append(out, judge(v, vals, nil, false))
	case result.ModeLat:
		for _, l := range e.Lat {
			v := Verdict{Test: test, Figure: l.Figure, Bound: l.Text, Limit: l.MaxNS}
			var vals []float64
			var within []interval
			runs := r.Runs
			if len(runs) == 0 {
				runs = []result.RunFigures{{Iterations: r.Iterations, Latency: r.Latency}}
			}
			for _, f := range runs {
				for _, q := range f.Latency.Percentiles {
					if q.P != l.P || !q.Value.OK {
						continue
					}
					vals = append(vals, q.Value.NS)
					if q.CILow.OK && q.CIHigh.OK && q.CILow.NS > 0 && q.CIHigh.NS >= q.CILow.NS {
						within = append(within, interval{q.CILow.NS, q.CIHigh.NS})
					} else {
						within = append(within, interval{})
					}
				}
			}
			out = append(out, judge(v, vals, within, true))
		}
	}
	return out
}

// interval is one run's own interval of a figure; zero: none.
type interval struct{ lo, hi float64 }

// judge fills v from the figure's values over the runs (vals) and, for a
// percentile, each run's own interval (within, same order); ceiling: the
// bound is a maximum (latency), else a minimum (bandwidth).
func judge(v Verdict, vals []float64, within []interval, ceiling bool) Verdict {
	v.Runs = len(vals)
	v.Verdict = CannotTell
	if len(vals) == 0 {
		v.Note = "the figure is n/a (too few samples for it: raise -n or -D)"
		return v
	}
	for _, x := range vals {
		if !(x > 0) || math.IsInf(x, 0) {
			v.Note = "the figure is not a positive number"
			return v
		}
	}
	v.Value = median(vals)
	// w: one run's sampling error of the figure, a standard deviation in
	// log units, from the runs' own intervals (their median width)
	var ws []float64
	z := math.Sqrt2 * math.Erfinv(Confidence)
	for _, in := range within {
		if in.lo > 0 {
			ws = append(ws, (math.Log(in.hi)-math.Log(in.lo))/(2*z))
		}
	}
	w := 0.0
	if len(ws) > 0 {
		w = median(ws)
	}
	var sd float64 // the spread the interval is made of, log units
	switch k := len(vals); {
	case k == 1 && len(within) == 1 && within[0].lo > 0:
		v.Low, v.High, v.Interval, v.Method = within[0].lo, within[0].hi, true, "order statistics, one run"
		sd = w
	case k == 1 && ceiling:
		v.Note = "one run, and the percentile has no interval (too few samples): raise -n, or use --repeat " + fmt.Sprint(SingleRunRepeat)
		return v
	case k == 1:
		v.Note = fmt.Sprintf("one run, no interval; use --repeat %d", SingleRunRepeat)
		return v
	default:
		var m, ss float64
		for _, x := range vals {
			m += math.Log(x)
		}
		m /= float64(k)
		for _, x := range vals {
			ss += (math.Log(x) - m) * (math.Log(x) - m)
		}
		sd = math.Max(math.Sqrt(ss/float64(k-1)), w)
		half := tQuantile(k-1) * sd / math.Sqrt(float64(k))
		v.Low, v.High, v.Interval = math.Exp(m-half), math.Exp(m+half), true
		v.Method = fmt.Sprintf("t over %d runs", k)
	}
	switch {
	case ceiling && v.High <= v.Limit, !ceiling && v.Low >= v.Limit:
		v.Verdict = Pass
	case ceiling && v.Low > v.Limit, !ceiling && v.High < v.Limit:
		v.Verdict = Fail
	default:
		v.Repeat = settle(v, sd)
	}
	return v
}

// settle is the smallest --repeat K (above the runs there are, at most
// MaxSuggestRepeat) whose t interval, at the interval's centre and spread
// sd (log units), lies wholly on one side of the bound; 0 when none does.
func settle(v Verdict, sd float64) int {
	d := math.Abs((math.Log(v.Low)+math.Log(v.High))/2 - math.Log(v.Limit))
	if !(sd > 0) || !(d > 0) {
		return 0
	}
	for k := max(v.Runs+1, 2); k <= MaxSuggestRepeat; k++ {
		if tQuantile(k-1)*sd/math.Sqrt(float64(k)) < d {
			return k
		}
	}
	return 0
}

// tTable is Student's t at 0.975 (two-sided 95 %) for 1 to 30 degrees of freedom.
var tTable = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile is Student's t at 0.975 for df degrees of freedom (df >= 1);
// beyond the table, the normal quantile with its first correction.
func tQuantile(df int) float64 {
	if df <= len(tTable) {
		return tTable[max(df, 1)-1]
	}
	const z = 1.959964
	return z + (z*z*z+z)/(4*float64(df))
}

func median(vals []float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// FailError is the outcome of a bound whose interval wholly misses it.
type FailError struct{ Verdicts []Verdict }

func (e *FailError) Error() string {
	return "expectation not met:" + list(e.Verdicts)
}

// CannotTellError is the outcome when no bound failed but some could not
// be judged: the interval straddles the bound, or there is none.
type CannotTellError struct{ Verdicts []Verdict }

func (e *CannotTellError) Error() string {
	return "expectation cannot be told:" + list(e.Verdicts)
}

func list(vs []Verdict) string {
	if len(vs) == 1 {
		return " " + vs[0].String()
	}
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\n  " + v.String())
	}
	return b.String()
}

// Outcome is the error of the verdicts: *FailError when any failed, else
// *CannotTellError when any could not be told, else nil.
func Outcome(vs []Verdict) error {
	var fail, unsure []Verdict
	for _, v := range vs {
		switch v.Verdict {
		case Fail:
			fail = append(fail, v)
		case CannotTell:
			unsure = append(unsure, v)
		}
	}
	switch {
	case len(fail) > 0:
		return &FailError{fail}
	case len(unsure) > 0:
		return &CannotTellError{unsure}
	}
	return nil
}

// JudgeMesh judges e on every pair of a mesh document that holds results,
// each test named after its pair ("a(0)→b(1): write bw 64K").
func JudgeMesh(doc *result.MeshDocument, e Expectations) []Verdict {
	var out []Verdict
	for _, p := range doc.Pairs {
		for i := range p.Results {
			for _, v := range JudgeResult(&p.Results[i], p.Env, e) {
				v.Test = p.Name() + ": " + v.Test
				out = append(out, v)
			}
		}
	}
	return out
}

// Write prints the verdicts under a heading, one a line, with a last line
// counting them: "expectations: 2 pass, 1 fail, 0 cannot tell".
func Write(w io.Writer, vs []Verdict) error {
	if len(vs) == 0 {
		return nil
	}
	n := map[string]int{}
	var b strings.Builder
	fmt.Fprintf(&b, "\nExpectations (%g%% intervals; pass: the whole interval clears the bound, fail: it wholly misses):\n", Confidence*100)
	for _, v := range vs {
		n[v.Verdict]++
		b.WriteString("  " + v.String() + "\n")
	}
	fmt.Fprintf(&b, "expectations: %d pass, %d fail, %d cannot tell\n", n[Pass], n[Fail], n[CannotTell])
	_, err := io.WriteString(w, b.String())
	return err
}

// Record is v as the accept document records it.
func (v Verdict) Record() result.AcceptCheck {
	c := result.AcceptCheck{Test: v.Test, Figure: v.Figure, Bound: v.Bound, Limit: v.Limit, Reference: v.Reference,
		Value: v.Value, Runs: v.Runs, Method: v.Method, Verdict: v.Verdict, Repeat: v.Repeat, Note: v.Note}
	if v.Interval {
		lo, hi := v.Low, v.High
		c.Low, c.High = &lo, &hi
	}
	return c
}
