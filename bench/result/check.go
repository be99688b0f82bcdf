package result

// The checks of a document's values on reading (ReadJSONFile): what no
// measurement can produce is an error naming the field, before compare,
// report, plot or the gate use it.

import (
	"errors"
	"fmt"
	"strconv"
)

// ValueError is a value of a document that no measurement produces: Path
// is its JSON path ("results[2].latency_ns.p99").
type ValueError struct {
	Path string
	Err  error
}

func (e *ValueError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ValueError) Unwrap() error { return e.Err }

// ErrBadValue is what every ValueError wraps.
var ErrBadValue = errors.New("impossible value")

// Check checks doc's results: no negative latency, percentiles in order
// (min ≤ p50 ≤ p90 ≤ p99 ≤ p99.9 ≤ p99.99 ≤ max, n/a ones skipped), each
// interval's p50 ≤ p99, and every histogram decodes. The first failure is
// a *ValueError.
func (doc *Document) Check() error {
	for i := range doc.Results {
		if err := doc.Results[i].check(fmt.Sprintf("results[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (r *Result) check(path string) error {
	if err := r.Latency.check(path + ".latency_ns"); err != nil {
		return err
	}
	if r.RTT != nil {
		if err := r.RTT.check(path + ".rtt_ns"); err != nil {
			return err
		}
	}
	for j := range r.PerQP {
		if err := r.PerQP[j].Latency.check(fmt.Sprintf("%s.per_qp[%d].latency_ns", path, j)); err != nil {
			return err
		}
	}
	for j := range r.Runs {
		if err := r.Runs[j].Latency.check(fmt.Sprintf("%s.runs[%d].latency_ns", path, j)); err != nil {
			return err
		}
	}
	for j, iv := range r.Intervals {
		p := fmt.Sprintf("%s.intervals[%d]", path, j)
		if err := ordered(p, []named{{"p50_ns", iv.P50}, {"p99_ns", iv.P99}}); err != nil {
			return err
		}
	}
	if r.Histogram != "" {
		if _, err := r.DecodeHistogram(); err != nil {
			return &ValueError{path + ".histogram", fmt.Errorf("%w: does not decode: %v", ErrBadValue, err)}
		}
	}
	return nil
}

// named is one value of an ordered sequence, by its JSON name.
type named struct {
	name string
	v    Nanos
}

func (l *Latency) check(path string) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"min", l.Min}, {"mean", l.Mean}, {"stdev", l.Stdev}, {"max", l.Max}} {
		if f.v < 0 {
			return &ValueError{path + "." + f.name, fmt.Errorf("%w: negative latency %s ns", ErrBadValue, num(f.v))}
		}
	}
	seq := []named{{"p50", l.P50}, {"p90", l.P90}, {"p99", l.P99}, {"p99_9", l.P99_9}, {"p99_99", l.P99_99}}
	if l.Count > 0 {
		seq = append([]named{{"min", Nanos{l.Min, true}}}, append(seq, named{"max", Nanos{l.Max, true}})...)
	}
	if err := ordered(path, seq); err != nil {
		return err
	}
	for j, q := range l.Percentiles {
		if q.Value.OK && q.Value.NS < 0 {
			return &ValueError{fmt.Sprintf("%s.percentiles[%d].value", path, j), fmt.Errorf("%w: negative latency %s ns", ErrBadValue, num(q.Value.NS))}
		}
	}
	return nil
}

// ordered checks that the present values of seq are not negative and do
// not decrease.
func ordered(path string, seq []named) error {
	var prev *named
	for i := range seq {
		s := &seq[i]
		if !s.v.OK {
			continue
		}
		if s.v.NS < 0 {
			return &ValueError{path + "." + s.name, fmt.Errorf("%w: negative latency %s ns", ErrBadValue, num(s.v.NS))}
		}
		if prev != nil && s.v.NS < prev.v.NS {
			return &ValueError{path + "." + s.name, fmt.Errorf("%w: %s ns is below %s's %s ns (out of order)",
				ErrBadValue, num(s.v.NS), prev.name, num(prev.v.NS))}
		}
		prev = s
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
