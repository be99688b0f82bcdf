package isolation

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The pass/fail rule (--max-inflation p99=2x,p50=1.5x): a bound on a
// figure's ratio attacked/alone is crossed when the ratio's interval lies
// wholly above it, that is when its lower end exceeds the bound. The point
// estimate alone would fail a CI job on noise about half the time when the
// true inflation sits at the bound; the lower end fails it only when the
// runs show, at the document's confidence, that the bound is exceeded.
// For bandwidth the ratio is attacked/alone too, and the bound is a floor:
// "bandwidth=0.5x" is crossed when the interval's upper end lies below 0.5.

// MaxBound bounds a --max-inflation factor.
const MaxBound = 1e6

// ParseBounds reads "p99=2x,p50=1.5x" (the x optional) into bounds, one
// per figure of result.IsolationFigures.
func ParseBounds(s string) ([]result.InflationBound, error) {
	var out []result.InflationBound
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		fig, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--max-inflation %q: want FIGURE=FACTORx, such as p99=2x", part)
		}
		fig = strings.TrimSpace(fig)
		if !slices.Contains(result.IsolationFigures, fig) {
			return nil, fmt.Errorf("--max-inflation %q: figure %q unknown; valid: %s", part, fig, strings.Join(result.IsolationFigures, ", "))
		}
		num := strings.TrimSuffix(strings.TrimSpace(val), "x")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > MaxBound {
			return nil, fmt.Errorf("--max-inflation %q: factor %q: want a number in (0, %g], such as 2x", part, val, float64(MaxBound))
		}
		if fig != result.FigureBandwidth && v < 1 {
			return nil, fmt.Errorf("--max-inflation %q: a latency bound below 1x (%g) fails on an unharmed victim: want 1x or more", part, v)
		}
		if fig == result.FigureBandwidth && v > 1 {
			return nil, fmt.Errorf("--max-inflation %q: the bandwidth bound is a floor on attacked/alone, at most 1x (%g)", part, v)
		}
		if slices.ContainsFunc(out, func(b result.InflationBound) bool { return b.Figure == fig }) {
			return nil, fmt.Errorf("--max-inflation: figure %q bounded twice", fig)
		}
		out = append(out, result.InflationBound{Figure: fig, Max: v})
	}
	return out, nil
}

// Judge judges every bound for every attacker of doc, in order.
func Judge(doc *result.IsolationDocument, bounds []result.InflationBound) []result.InflationVerdict {
	var out []result.InflationVerdict
	for _, a := range doc.Attackers {
		for _, b := range bounds {
			v := result.InflationVerdict{Attacker: a.Name, Figure: b.Figure, Max: b.Max, Verdict: result.VerdictUnknown}
			for _, r := range a.Ratios {
				if r.Figure != b.Figure {
					continue
				}
				v.Ratio, v.Low, v.High = r.Ratio, r.Low, r.High
				switch {
				case r.Low == nil || r.High == nil:
				case b.Figure == result.FigureBandwidth && *r.High < b.Max, b.Figure != result.FigureBandwidth && *r.Low > b.Max:
					v.Verdict = result.VerdictCrossed
				default:
					v.Verdict = result.VerdictPass
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// CrossedError is the outcome of crossed bounds (exit 1): each one named
// with its attacker, figure, ratio and interval.
type CrossedError struct{ Verdicts []result.InflationVerdict }

func (e *CrossedError) Error() string {
	return "isolation: --max-inflation crossed: " + verdictList(e.Verdicts)
}

// UnjudgedError is the outcome when no bound was crossed but some could
// not be judged (a figure n/a, or no interval): the gate could not see.
type UnjudgedError struct{ Verdicts []result.InflationVerdict }

func (e *UnjudgedError) Error() string {
	return "isolation: --max-inflation could not be judged (no interval: too few samples for the percentile, or too few runs; lengthen -D or raise --repeat): " + verdictList(e.Verdicts)
}

func verdictList(vs []result.InflationVerdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s %s %s (bound %gx)", v.Attacker, v.Figure, ratioText(v.Ratio, v.Low, v.High), v.Max)
	}
	return strings.Join(parts, "; ")
}

// ratioText formats a ratio with its interval: "3.10x (2.80-3.40)", or "n/a".
func ratioText(r, lo, hi *float64) string {
	if r == nil {
		return "n/a"
	}
	s := fmt.Sprintf("%.2fx", *r)
	if lo != nil && hi != nil {
		s += fmt.Sprintf(" (%.2f-%.2f)", *lo, *hi)
	}
	return s
}

// Outcome is the error the verdicts give: *CrossedError when any bound was
// crossed, else *UnjudgedError when any could not be judged, else nil.
func Outcome(vs []result.InflationVerdict) error {
	var crossed, unknown []result.InflationVerdict
	for _, v := range vs {
		switch v.Verdict {
		case result.VerdictCrossed:
			crossed = append(crossed, v)
		case result.VerdictUnknown:
			unknown = append(unknown, v)
		}
	}
	switch {
	case len(crossed) > 0:
		return &CrossedError{crossed}
	case len(unknown) > 0:
		return &UnjudgedError{unknown}
	}
	return nil
}
