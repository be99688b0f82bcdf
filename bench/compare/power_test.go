package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// withU returns runs x (n values) and y (m values) without ties in which y
// beats x in exactly u of the n*m pairs: U of y is u.
func withU(n, m, u int) (x, y []float64) {
	for j := 0; j < m; j++ {
		y = append(y, float64(j))
	}
	left := n*m - u // pairs x wins
	for i := 0; i < n; i++ {
		k := min(m, left) // x[i] beats the k smallest y
		left -= k
		x = append(x, float64(k)-0.5+float64(i)*1e-6)
	}
	return x, y
}

// TestCriticalU: criticalU is where the gate's own test, MannWhitney, turns
// significant, in the exact range and in the normal approximation.
func TestCriticalU(t *testing.T) {
	for _, c := range []struct {
		n, m  int
		alpha float64
		want  int // -1: never significant
	}{
		{5, 5, 0.05, 23},  // 4 of 252 arrangements have U >= 23: p 0.032; 7 have U >= 22: p 0.056
		{5, 5, 0.01, 25},  // only full separation, p = 0.008
		{3, 3, 0.05, -1},  // 2/20 = 0.1 at best
		{4, 4, 0.05, 16},  // 2/70 = 0.029
		{5, 3, 0.05, 15},  // 2/56 = 0.036
		{8, 8, 0.05, 0},   // checked against MannWhitney only
		{60, 60, 0.05, 0}, // normal approximation
		{51, 7, 0.10, 0},
	} {
		got := criticalU(c.n, c.m, c.alpha)
		if c.want != 0 && got != c.want {
			t.Errorf("criticalU(%d, %d, %g) = %d, want %d", c.n, c.m, c.alpha, got, c.want)
		}
		if got < 0 {
			if MinP(c.n, c.m) < c.alpha {
				t.Errorf("criticalU(%d, %d, %g) = -1, but MinP is %g", c.n, c.m, c.alpha, MinP(c.n, c.m))
			}
			continue
		}
		x, y := withU(c.n, c.m, got)
		if p, _, _ := MannWhitney(x, y); !(p < c.alpha) {
			t.Errorf("%d vs %d runs, U %d: p %g, not below %g", c.n, c.m, got, p, c.alpha)
		}
		x, y = withU(c.n, c.m, got-1)
		if p, _, _ := MannWhitney(x, y); p < c.alpha {
			t.Errorf("%d vs %d runs, U %d: p %g, already below %g", c.n, c.m, got-1, p, c.alpha)
		}
	}
}

func times(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

// p99 of the five real runs of bench/compare/testdata/repeat5.json, ns.
var noisyP99 = []float64{140415.5, 116799.5, 104447.5, 97087.5, 339711.5}

// TestMinDetectable pins the estimate on cases whose answer is known.
func TestMinDetectable(t *testing.T) {
	// CV 0.5 %
	quiet := []float64{100, 101, 99.5, 100.4, 99.8}
	quiet2 := []float64{100.2, 99.7, 100.9, 99.9, 100.1}
	for _, c := range []struct {
		name      string
		base, cur []float64
		rate      bool
		alpha     float64
		power     float64
		want      float64 // to 0.1 %; NaN and Inf as themselves
	}{
		// the case: five noisy runs each side, a 10 % limit
		{"noisy p99, 5 vs 5", noisyP99, times(noisyP99, 1.3), false, 0.05, 0.8, 2.738},
		{"quiet, 5 vs 5", quiet, quiet2, false, 0.05, 0.8, 0.0135},
		{"quiet bandwidth", quiet, quiet2, true, 0.05, 0.8, 0.0133},
		{"identical runs", []float64{7, 7, 7, 7}, []float64{7, 7, 7, 7}, false, 0.05, 0.8, 0},
		{"3 vs 4 cannot reach p < 0.05 (2/35)", []float64{7, 7, 7}, []float64{7, 7, 7, 7}, false, 0.05, 0.8, math.Inf(1)},
		{"3 vs 3 cannot reach p < 0.05", quiet[:3], quiet2[:3], false, 0.05, 0.8, math.Inf(1)},
		{"one run", quiet[:1], quiet2, false, 0.05, 0.8, math.NaN()},
		{"a zero value", []float64{0, 1, 2}, quiet2, false, 0.05, 0.8, math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := MinDetectable(c.base, c.cur, c.rate, c.alpha, c.power)
			switch {
			case math.IsNaN(c.want), math.IsInf(c.want, 0):
				if !(math.IsNaN(c.want) && math.IsNaN(got)) && got != c.want {
					t.Errorf("got %v, want %v", got, c.want)
				}
			case math.Abs(got-c.want) > 0.0005:
				t.Errorf("got %.4f, want %.3f", got, c.want)
			}
		})
	}
	// no unit: scaling every run leaves it as it was; more power needs more
	a := MinDetectable(quiet, quiet2, false, 0.05, 0.8)
	if b := MinDetectable(times(quiet, 1e3), times(quiet2, 1e3), false, 0.05, 0.8); math.Abs(a-b) > 1e-9 {
		t.Errorf("scaled runs: %v, unscaled %v", b, a)
	}
	if b := MinDetectable(quiet, quiet2, false, 0.05, 0.95); b < a {
		t.Errorf("power 95 %%: %v, below power 80 %%: %v", b, a)
	}
	if b := MinDetectable(quiet, quiet2, false, 0.01, 0.8); b < a {
		t.Errorf("alpha 0.01: %v, below alpha 0.05: %v", b, a)
	}
}

// runsDoc is a document with one send lat test whose runs have p99 (ns)
// and n iterations each; ciRel is each run's p99 confidence interval
// half-width in log units (0: none).
func runsDoc(p99 []float64, n int64, ciRel float64) *result.Document {
	var runs []result.RunFigures
	for _, v := range p99 {
		q := result.Quantile{P: 99, Value: result.Nanos{NS: v, OK: true}}
		if ciRel > 0 {
			q.CILow = result.Nanos{NS: v * math.Exp(-ciRel), OK: true}
			q.CIHigh = result.Nanos{NS: v * math.Exp(ciRel), OK: true}
		}
		runs = append(runs, result.RunFigures{Iterations: n, Latency: result.Latency{Count: n, Mean: v / 2, Confidence: 0.95,
			P99: result.Nanos{NS: v, OK: true}, Percentiles: []result.Quantile{q}}})
	}
	r := result.Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: n * int64(len(p99)), Runs: runs}
	r.Latency = runs[0].Latency
	return &result.Document{Results: []result.Result{r}}
}

// TestDetectableThresholds: a figure is underpowered exactly when its
// detectable change exceeds the limit, and the suggestions resolve it.
func TestDetectableThresholds(t *testing.T) {
	base := runsDoc([]float64{100, 104, 97, 101, 99}, 3000, 0)
	cur := runsDoc([]float64{102, 98, 100.5, 103, 99.2}, 3000, 0)
	g := GateAlpha(base, cur, map[string]float64{"p99": 0.10}, 0.05)
	if len(g.Detectable) != 1 {
		t.Fatalf("detectable %v, notes %v", g.Detectable, g.Notes)
	}
	mdc := g.Detectable[0].Change
	if math.Abs(mdc-0.0566) > 0.00005 {
		t.Fatalf("detectable change %.4f, want 0.0566", mdc)
	}
	for _, c := range []struct {
		limit float64
		under bool
	}{{mdc - 1e-9, true}, {mdc, false}, {mdc + 1e-9, false}, {0.05, true}, {0.06, false}} {
		g := GateAlpha(base, cur, map[string]float64{"p99": c.limit}, 0.05)
		d := g.Detectable[0]
		if d.Underpowered() != c.under || (len(g.Underpowered()) == 1) != c.under || (g.PowerErr() != nil) != c.under {
			t.Errorf("limit %.6f (detectable %.6f): underpowered %v, want %v", c.limit, d.Change, d.Underpowered(), c.under)
		}
		if !c.under {
			if s := d.String(); strings.HasPrefix(s, "UNDERPOWERED") {
				t.Errorf("limit %.6f: %s", c.limit, s)
			}
			continue
		}
		// --repeat K resolves it, K-1 does not
		pm, _ := newPowerModel([]float64{100, 104, 97, 101, 99}, []float64{102, 98, 100.5, 103, 99.2}, false)
		want := logShift(c.limit, false)
		if d.Repeat == 0 || pm.shift(d.Repeat, d.Repeat, 0.05, 0.8) > want || pm.shift(d.Repeat-1, d.Repeat-1, 0.05, 0.8) <= want {
			t.Errorf("limit %.6f: --repeat %d does not resolve it exactly", c.limit, d.Repeat)
		}
		if d.Iters != 0 { // no intervals: -n cannot be judged
			t.Errorf("limit %.6f: -n %d suggested without intervals", c.limit, d.Iters)
		}
		if s := d.String(); !strings.HasPrefix(s, "UNDERPOWERED send lat 2B: p99: smallest detectable change +5.7% > limit ") {
			t.Errorf("limit %.6f: %s", c.limit, s)
		}
	}
}

// TestDetectableIters: when the runs' spread is all sampling noise (their
// p99 intervals as wide as the spread), more iterations resolve it by
// the factor the spread must shrink; when the spread is between runs,
// they cannot.
func TestDetectableIters(t *testing.T) {
	bv := []float64{100, 104, 97, 101, 99}
	nv := []float64{102, 98, 100.5, 103, 99.2}
	pm, _ := newPowerModel(bv, nv, false)
	z := math.Sqrt2 * math.Erfinv(0.95)
	sampling := GateAlpha(runsDoc(bv, 3000, pm.sd*z), runsDoc(nv, 3000, pm.sd*z), map[string]float64{"p99": 0.03}, 0.05).Detectable[0]
	a := math.Log1p(0.03) / math.Log1p(sampling.Change)
	if want := roundUp(3000 / (a * a)); sampling.Iters != want || sampling.ItersNow != 3000 {
		t.Errorf("all sampling noise: -n %d (now %d), want %d", sampling.Iters, sampling.ItersNow, want)
	}
	if s := sampling.String(); !strings.Contains(s, "would resolve it, or -n ") {
		t.Errorf("%s", s)
	}
	between := GateAlpha(runsDoc(bv, 3000, pm.sd*z/10), runsDoc(nv, 3000, pm.sd*z/10), map[string]float64{"p99": 0.03}, 0.05).Detectable[0]
	if between.Iters != 0 || !strings.Contains(between.String(), "more iterations (-n) alone would not") {
		t.Errorf("spread between runs: -n %d: %s", between.Iters, between)
	}
}

// raisedPair reads the real runs of testdata/repeat5.json and their copy
// with every run's p99 raised 30 %.
func raisedPair(t *testing.T) (base, cur *result.Document) {
	t.Helper()
	var err error
	if base, err = result.ReadJSONFile("testdata/repeat5.json"); err != nil {
		t.Fatal(err)
	}
	if cur, err = result.ReadJSONFile("testdata/repeat5-p99x1.3.json"); err != nil {
		t.Fatal(err)
	}
	return base, cur
}

// TestGateUnderpoweredNoisy: the silent pass, on the real runs.
func TestGateUnderpoweredNoisy(t *testing.T) {
	base, cur := raisedPair(t)
	g := GateAlpha(base, cur, map[string]float64{"p99": 0.10}, 0.05)
	if g.Err() != nil || len(g.Changes) != 1 || g.Changes[0].P < 0.05 {
		t.Fatalf("a noisy +30%% should not be significant: %v %v", g.Err(), g.Changes)
	}
	u := g.Underpowered()
	if len(u) != 1 || u[0].Metric != "p99" || u[0].Repeat != 0 {
		t.Fatalf("underpowered %+v", u)
	}
	if err := g.PowerErr(); err == nil || !strings.Contains(err.Error(), "send lat 2B p99 detects +273.8% > 10%") {
		t.Errorf("power error %v", err)
	}
}

// TestRaisedFixture: testdata/repeat5-p99x1.3.json is repeat5.json with
// every run's p99 (and the medians') times 1.3, and nothing else changed.
func TestRaisedFixture(t *testing.T) {
	base, cur := raisedPair(t)
	b, c := base.Results[0], cur.Results[0]
	if len(b.Runs) != 5 || len(c.Runs) != 5 {
		t.Fatalf("runs %d, %d", len(b.Runs), len(c.Runs))
	}
	for i := range b.Runs {
		for _, f := range []string{"p50", "p90", "p99", "mean", "max"} {
			bv, _ := b.Runs[i].RunFigure(f)
			cv, _ := c.Runs[i].RunFigure(f)
			want := bv
			if f == "p99" {
				want *= 1.3
			}
			if math.Abs(cv-want) > 1e-6*want {
				t.Errorf("run %d %s: %v, want %v", i, f, cv, want)
			}
		}
	}
	if len(EnvDiffs(base, cur)) != 0 {
		t.Errorf("environments differ: %v", EnvDiffs(base, cur))
	}
}

// TestPowerErrUnestimated: a figure backed in one run of a side cannot be
// estimated, and counts as blind.
func TestPowerErrUnestimated(t *testing.T) {
	base := runsDoc([]float64{100, 104, 97, 101, 99}, 3000, 0)
	cur := runsDoc([]float64{102, 98, 100.5, 103, 99.2}, 3000, 0)
	for i := 1; i < 5; i++ {
		cur.Results[0].Runs[i].Latency.Percentiles[0].Value.OK = false
	}
	g := GateAlpha(base, cur, map[string]float64{"p99": 0.50}, 0.05)
	if err := g.PowerErr(); len(g.Detectable) != 0 || err == nil || !strings.Contains(err.Error(), "send lat 2B p99 not estimated") {
		t.Errorf("detectable %v, power error %v", g.Detectable, err)
	}
}

// TestDetectableCalibrated: on runs from a known distribution, the gate's
// test finds the stated detectable change about as often as the stated
// power says. Log-normal runs of 10 % spread, plain and with one run in
// seven 2.7 times slower; 5 runs a side; the mean true power over 20 sets
// of runs (each drawn afresh, its change tested in 300 new draws).
func TestDetectableCalibrated(t *testing.T) {
	for _, heavy := range []bool{false, true} {
		r := rand.New(rand.NewPCG(42, 5))
		draw := func() float64 {
			if heavy && r.Float64() < 1.0/7 {
				return math.Exp(0.1*r.NormFloat64() + 1)
			}
			return math.Exp(0.1 * r.NormFloat64())
		}
		const k, sets, sims = 5, 20, 300
		var sum float64
		b, c := make([]float64, k), make([]float64, k)
		for set := 0; set < sets; set++ {
			for i := range b {
				b[i], c[i] = draw(), draw()
			}
			mdc := MinDetectable(b, c, false, 0.05, 0.8)
			hits := 0
			for s := 0; s < sims; s++ {
				for i := range b {
					b[i], c[i] = draw(), draw()*(1+mdc)
				}
				if p, u, _ := MannWhitney(b, c); p < 0.05 && u < k*k/2 {
					hits++
				}
			}
			sum += float64(hits) / sims
		}
		if mean := sum / sets; mean < 0.7 || mean > 0.92 {
			t.Errorf("heavy %v: the mean true power at the stated change is %.2f, stated 0.80", heavy, mean)
		} else {
			t.Logf("heavy %v: mean true power %.2f at the stated change (stated 0.80)", heavy, mean)
		}
	}
}

// TestDetectableTooFewRuns: 3 against 3 runs detect nothing, and say so.
func TestDetectableTooFewRuns(t *testing.T) {
	g := GateAlpha(runsDoc([]float64{100, 104, 97}, 3000, 0), runsDoc([]float64{102, 98, 100.5}, 3000, 0), map[string]float64{"p99": 0.10}, 0.05)
	if len(g.Detectable) != 1 || !math.IsInf(g.Detectable[0].Change, 1) {
		t.Fatalf("detectable %+v", g.Detectable)
	}
	d := g.Detectable[0]
	if s := d.String(); !strings.HasPrefix(s, "UNDERPOWERED send lat 2B: p99: no change is detectable: 3 against 3 runs cannot reach p < 0.05 (limit 10%): --repeat ") {
		t.Errorf("%s", s)
	}
	if err := g.PowerErr(); err == nil || !strings.HasSuffix(err.Error(), "send lat 2B p99 detects no change (3 vs 3 runs)") {
		t.Errorf("power error %v", err)
	}
}

// TestDetectableRealRuns: a second real set of five runs
// (testdata/repeat5b.json, the same loopback command as repeat5.json),
// gated against itself at 10 %: its p90 (CV 3.0 %) is seen, its p50
// (5.4 %) and p99 (7.1 %) are not, and each says what would resolve it.
func TestDetectableRealRuns(t *testing.T) {
	doc, err := result.ReadJSONFile("testdata/repeat5b.json")
	if err != nil {
		t.Fatal(err)
	}
	g := GateAlpha(doc, doc, map[string]float64{"p50": 0.10, "p90": 0.10, "p99": 0.10}, 0.05)
	want := map[string]struct {
		change float64
		under  bool
		repeat int
	}{"p50": {0.151, true, 8}, "p90": {0.095, false, 0}, "p99": {0.189, true, 19}}
	if len(g.Detectable) != len(want) {
		t.Fatalf("detectable %+v", g.Detectable)
	}
	for _, d := range g.Detectable {
		w := want[d.Metric]
		if math.Abs(d.Change-w.change) > 0.0005 || d.Underpowered() != w.under || d.Repeat != w.repeat || d.Iters != 0 {
			t.Errorf("%s: change %.4f underpowered %v --repeat %d -n %d, want %.3f %v %d 0", d.Metric, d.Change, d.Underpowered(), d.Repeat, d.Iters, w.change, w.under, w.repeat)
		}
	}
}
