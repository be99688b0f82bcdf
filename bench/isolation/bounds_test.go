package isolation

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestParseBounds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []result.InflationBound
		err  string
	}{
		{in: "p99=2x", want: []result.InflationBound{{Figure: "p99", Max: 2}}},
		{in: "p99=2x, p50=1.5", want: []result.InflationBound{{Figure: "p99", Max: 2}, {Figure: "p50", Max: 1.5}}},
		{in: "p99.99=10x,bandwidth=0.5x", want: []result.InflationBound{{Figure: "p99.99", Max: 10}, {Figure: "bandwidth", Max: 0.5}}},
		{in: "p98=2x", err: `figure "p98" unknown`},
		{in: "p99", err: "want FIGURE=FACTORx"},
		{in: "p99=0x", err: "factor"},
		{in: "p99=NaN", err: "factor"},
		{in: "p99=-2", err: "factor"},
		{in: "p99=2e9", err: "factor"},
		{in: "p99=0.5x", err: "below 1x"},
		{in: "bandwidth=2x", err: "floor"},
		{in: "p99=2x,p99=3x", err: "bounded twice"},
	} {
		got, err := ParseBounds(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--max-inflation") {
				t.Errorf("%q: error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: bound %d %+v, want %+v", c.in, i, got[i], c.want[i])
			}
		}
	}
}

func ratioDoc(fig string, r, lo, hi *float64) *result.IsolationDocument {
	return &result.IsolationDocument{Attackers: []result.IsolationAttacker{{Name: "bw-hog",
		Ratios: []result.InflationRatio{{Figure: fig, Ratio: r, Low: lo, High: hi}}}}}
}

// TestJudgeLowerEnd: a bound is crossed only when the interval's lower end
// lies above it (the upper end below a bandwidth floor); a point estimate
// above the bound with an interval reaching below it passes; no interval
// is n/a.
func TestJudgeLowerEnd(t *testing.T) {
	for _, c := range []struct {
		name       string
		fig        string
		r, lo, hi  *float64
		max        float64
		want       string
		wantErr    error
		errMention string
	}{
		{"point above, interval reaching below: pass", "p99", ptr(2.5), ptr(1.9), ptr(3.1), 2, result.VerdictPass, nil, ""},
		{"interval wholly above: crossed", "p99", ptr(2.5), ptr(2.1), ptr(3.1), 2, result.VerdictCrossed, &CrossedError{}, "bw-hog p99 2.50x (2.10-3.10) (bound 2x)"},
		{"lower end at the bound: pass", "p99", ptr(2.5), ptr(2), ptr(3), 2, result.VerdictPass, nil, ""},
		{"wholly below: pass", "p50", ptr(1.1), ptr(1.0), ptr(1.2), 1.5, result.VerdictPass, nil, ""},
		{"n/a figure", "p99.99", nil, nil, nil, 2, result.VerdictUnknown, &UnjudgedError{}, "bw-hog p99.99 n/a"},
		{"ratio without interval", "p99", ptr(5), nil, nil, 2, result.VerdictUnknown, &UnjudgedError{}, "5.00x"},
		{"bandwidth above the floor's reach: pass", "bandwidth", ptr(0.4), ptr(0.3), ptr(0.6), 0.5, result.VerdictPass, nil, ""},
		{"bandwidth wholly below the floor: crossed", "bandwidth", ptr(0.3), ptr(0.2), ptr(0.45), 0.5, result.VerdictCrossed, &CrossedError{}, "bandwidth"},
	} {
		vs := Judge(ratioDoc(c.fig, c.r, c.lo, c.hi), []result.InflationBound{{Figure: c.fig, Max: c.max}})
		if len(vs) != 1 || vs[0].Verdict != c.want || vs[0].Attacker != "bw-hog" {
			t.Errorf("%s: %+v, want %s", c.name, vs, c.want)
			continue
		}
		err := Outcome(vs)
		switch want := c.wantErr.(type) {
		case nil:
			if err != nil {
				t.Errorf("%s: outcome %v", c.name, err)
			}
		case *CrossedError:
			var ce *CrossedError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.errMention) {
				t.Errorf("%s: outcome %v, want a CrossedError naming %q", c.name, err, c.errMention)
			}
			_ = want
		case *UnjudgedError:
			var ue *UnjudgedError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.errMention) {
				t.Errorf("%s: outcome %v, want an UnjudgedError naming %q", c.name, err, c.errMention)
			}
		}
	}
	// crossed wins over n/a: exit 1, not 9
	d := ratioDoc("p99", ptr(3), ptr(2.5), ptr(3.5))
	d.Attackers[0].Ratios = append(d.Attackers[0].Ratios, result.InflationRatio{Figure: "p99.99"})
	var ce *CrossedError
	if err := Outcome(Judge(d, []result.InflationBound{{Figure: "p99", Max: 2}, {Figure: "p99.99", Max: 2}})); !errors.As(err, &ce) {
		t.Errorf("crossed and n/a: %v, want CrossedError", err)
	}
}
