package expect

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
)

func TestParseBW(t *testing.T) {
	for _, c := range []struct {
		in       string
		fraction float64
		gbps     float64
		err      string
	}{
		{"90%", 0.9, 0, ""},
		{" 100% ", 1, 0, ""},
		{"375Gb/s", 0, 375, ""},
		{"40Gbps", 0, 40, ""},
		{"5GB/s", 0, 40, ""},
		{"800Mb/s", 0, 0.8, ""},
		{"1.6Tb/s", 0, 1600, ""},
		{"0%", 0, 0, "in (0, 100]"},
		{"101%", 0, 0, "in (0, 100]"},
		{"5GiB/s", 0, 0, `--expect-bw "5GiB/s": want PCT%`},
		{"40", 0, 0, `--expect-bw "40": want PCT%`},
		{"-3Gb/s", 0, 0, "positive rate"},
		{"NaNGb/s", 0, 0, "positive rate"},
	} {
		b, err := ParseBW(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseBW(%q) = %v, want error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || b.Fraction != c.fraction || (b.Gbps-c.gbps) > 1e-9 || (c.gbps-b.Gbps) > 1e-9 {
			t.Errorf("ParseBW(%q) = %+v, %v; want fraction %g, %g Gb/s", c.in, b, err, c.fraction, c.gbps)
		}
	}
}

func TestParseLat(t *testing.T) {
	l, err := ParseLat("p50=2.5us, p99=5us,p99.9=1ms,p90=800ns")
	if err != nil || len(l) != 4 || l[0].MaxNS != 2500 || l[1].Figure != "p99" || l[2].MaxNS != 1e6 || l[3].MaxNS != 800 {
		t.Fatalf("ParseLat = %+v, %v", l, err)
	}
	for in, want := range map[string]string{
		"p50":             "want PERCENTILE=DURATION",
		"50=2us":          "want PERCENTILE=DURATION",
		"p100=2us":        "want PERCENTILE=DURATION",
		"p50=2":           "want a unit of ns, us or ms",
		"p50=2s":          "want a unit of ns, us or ms",
		"p50=-2us":        "positive number",
		"p50=1us,p50=2us": "p50 bounded twice",
		"":                "want PERCENTILE=DURATION",
	} {
		if _, err := ParseLat(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLat(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestCheckSpecs(t *testing.T) {
	lat := spec.Spec{Op: "write", Mode: result.ModeLat}
	bw := spec.Spec{Op: "write", Mode: result.ModeBW}
	p999 := spec.Spec{Op: "write", Mode: result.ModeLat, Percentiles: []float64{50, 99.9}}
	l, _ := ParseLat("p99=5us")
	b, _ := ParseBW("90%")
	for _, c := range []struct {
		e     Expectations
		specs []spec.Spec
		err   string
	}{
		{Expectations{Lat: l}, []spec.Spec{lat}, ""},
		{Expectations{BW: b}, []spec.Spec{bw, lat}, ""},
		{Expectations{BW: b}, []spec.Spec{lat}, "no bandwidth test"},
		{Expectations{Lat: l}, []spec.Spec{bw}, "no latency test"},
		{Expectations{Lat: l}, []spec.Spec{p999}, "report p50, p99.9, not p99"},
	} {
		err := c.e.CheckSpecs(c.specs)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("CheckSpecs = %v, want %q", err, c.err)
		}
	}
}

// bwResult is a bandwidth test whose runs had the rates gbps (Gb/s).
func bwResult(gbps ...float64) result.Result {
	r := result.Result{Op: "write", Mode: result.ModeBW, SizeBytes: 65536, Iterations: 1000}
	for _, g := range gbps {
		r.Runs = append(r.Runs, result.RunFigures{Iterations: 1000, Bandwidth: result.Bandwidth{GbitPerSec: g}})
	}
	if len(gbps) == 1 {
		r.Runs = nil
		r.Bandwidth.GbitPerSec = gbps[0]
	}
	return r
}

// q is a p50 of value ns and interval lo..hi (0: none).
func q(v, lo, hi float64) result.Quantile {
	return result.Quantile{P: 50, Value: result.Nanos{NS: v, OK: true},
		CILow: result.Nanos{NS: lo, OK: lo > 0}, CIHigh: result.Nanos{NS: hi, OK: hi > 0}}
}

// latResult is a latency test whose runs' p50 are qs.
func latResult(qs ...result.Quantile) result.Result {
	r := result.Result{Op: "write", Mode: result.ModeLat, SizeBytes: 2, Iterations: 1000}
	for _, x := range qs {
		r.Runs = append(r.Runs, result.RunFigures{Iterations: 1000, Latency: result.Latency{Count: 1000, Percentiles: []result.Quantile{x}}})
	}
	if len(qs) == 1 {
		r.Runs = nil
		r.Latency = result.Latency{Count: 1000, Percentiles: []result.Quantile{qs[0]}}
	}
	return r
}

// TestJudge holds the interval rule: pass only when the whole interval
// clears the bound, fail only when it wholly misses, else cannot tell. The
// "straddles" cases pass a point comparison (the median clears the bound)
// and fail this test if the rule is reverted to one.
func TestJudge(t *testing.T) {
	env := &result.Env{Device: "mlx5_0", Port: 1, LinkGbps: 103.125, LinkDataGbps: 100}
	bw90, _ := ParseBW("90%")
	abs, _ := ParseBW("50Gb/s")
	p50, _ := ParseLat("p50=2.5us")
	for _, c := range []struct {
		name    string
		r       result.Result
		e       Expectations
		verdict string
		repeat  bool // a --repeat that settles it is named
		note    string
	}{
		{"bw runs well above", bwResult(97, 98, 96, 97.5, 98.2), Expectations{BW: bw90}, Pass, false, ""},
		{"bw runs well below", bwResult(70, 71, 69, 70.5), Expectations{BW: bw90}, Fail, false, ""},
		{"bw absolute above", bwResult(97, 98, 96), Expectations{BW: abs}, Pass, false, ""},
		// median 95 > 90, but three runs this spread do not show it
		{"bw straddles, point passes", bwResult(95, 84, 99), Expectations{BW: bw90}, CannotTell, true, ""},
		// median 88 < 90, but not shown either
		{"bw straddles, point fails", bwResult(88, 93, 80), Expectations{BW: bw90}, CannotTell, true, ""},
		{"bw one run far above", bwResult(99), Expectations{BW: bw90}, CannotTell, false, "one run, no interval; use --repeat 5"},
		{"lat one run, interval below", latResult(q(2000, 1900, 2100)), Expectations{Lat: p50}, Pass, false, ""},
		{"lat one run, interval above", latResult(q(3000, 2800, 3200)), Expectations{Lat: p50}, Fail, false, ""},
		// p50 2.3us <= 2.5us, but its interval reaches 2.7us
		{"lat one run straddles, point passes", latResult(q(2300, 2100, 2700)), Expectations{Lat: p50}, CannotTell, true, ""},
		{"lat one run, no interval", latResult(q(2000, 0, 0)), Expectations{Lat: p50}, CannotTell, false, "no interval"},
		{"lat runs below", latResult(q(2000, 1950, 2050), q(2010, 1960, 2060), q(1990, 1940, 2040)), Expectations{Lat: p50}, Pass, false, ""},
		// the runs agree exactly (a histogram's bucket), yet each run's
		// own interval reaches past the bound: not a pass
		{"lat runs equal, own intervals straddle", latResult(q(2400, 2000, 2900), q(2400, 2000, 2900), q(2400, 2000, 2900)), Expectations{Lat: p50}, CannotTell, true, ""},
		{"lat runs spread, point passes", latResult(q(2400, 2350, 2450), q(2000, 1950, 2050), q(2900, 2850, 2950)), Expectations{Lat: p50}, CannotTell, false, "not even --repeat 50"},
	} {
		vs := JudgeResult(&c.r, env, c.e)
		if len(vs) != 1 {
			t.Fatalf("%s: %d verdicts", c.name, len(vs))
		}
		v := vs[0]
		if v.Verdict != c.verdict || (v.Repeat > 0) != c.repeat || !strings.Contains(v.Note+v.String(), c.note) {
			t.Errorf("%s: %s (repeat %d, note %q); want %s, repeat named %v, note %q", c.name, v, v.Repeat, v.Note, c.verdict, c.repeat, c.note)
		}
		if v.Verdict == Pass && v.Interval && (v.Low < v.Limit && c.e.BW != nil || v.High > v.Limit && c.e.Lat != nil) {
			t.Errorf("%s: passed with an interval %g..%g across %g", c.name, v.Low, v.High, v.Limit)
		}
	}
}

func TestJudgeReference(t *testing.T) {
	bw90, _ := ParseBW("90%")
	r := bwResult(20, 21, 20.5)
	for _, c := range []struct {
		env   *result.Env
		limit float64
		ref   string
	}{
		{&result.Env{Device: "mlx5_0", Port: 1, LinkGbps: 103.125, LinkDataGbps: 100}, 90, "100 Gb/s, mlx5_0 port 1's data rate after line encoding"},
		{&result.Env{Device: "rxe0", Port: 1, LinkGbps: 10, SoftwareRDMA: true}, 9, "nominal link rate (a software device"},
		{&result.Env{Device: "siw0", Port: 1}, 0, ""},
	} {
		v := JudgeResult(&r, c.env, Expectations{BW: bw90})[0]
		if v.Limit != c.limit || !strings.Contains(v.Reference, c.ref) {
			t.Errorf("%s: limit %g ref %q; want %g %q", c.env.Device, v.Limit, v.Reference, c.limit, c.ref)
		}
		if c.limit == 0 && (v.Verdict != CannotTell || !strings.Contains(v.Note, "no rate")) {
			t.Errorf("%s: %s", c.env.Device, v)
		}
	}
}

func TestSettleShrinks(t *testing.T) {
	// the suggested repeat, run, settles it: the same spread at that many runs clears the bound
	bw90, _ := ParseBW("90%")
	env := &result.Env{Device: "d", Port: 1, LinkDataGbps: 100}
	r := bwResult(95, 88, 99)
	v := JudgeResult(&r, env, Expectations{BW: bw90})[0]
	if v.Verdict != CannotTell || v.Repeat < 4 || v.Repeat > MaxSuggestRepeat {
		t.Fatalf("%s", v)
	}
	if !strings.Contains(v.String(), "--repeat") {
		t.Errorf("%s: names no --repeat", v)
	}
}

func TestOutcome(t *testing.T) {
	p, f, u := Verdict{Verdict: Pass}, Verdict{Verdict: Fail}, Verdict{Verdict: CannotTell}
	var fe *FailError
	var ue *CannotTellError
	if err := Outcome([]Verdict{p, u, f}); !errors.As(err, &fe) || len(fe.Verdicts) != 1 {
		t.Errorf("fail and cannot tell: %v", err)
	}
	if err := Outcome([]Verdict{p, u}); !errors.As(err, &ue) {
		t.Errorf("cannot tell: %v", err)
	}
	if err := Outcome([]Verdict{p, p}); err != nil {
		t.Errorf("pass: %v", err)
	}
}

// TestJudgeOrderStat judges a real histogram's p50 interval.
func TestJudgeOrderStat(t *testing.T) {
	h := hist.New()
	for i := range 2000 {
		h.Record(int64(2000 + i%200))
	}
	r := result.Result{Op: "send", Mode: result.ModeLat, SizeBytes: 2, Iterations: 2000, Latency: result.NewLatency(h, 1)}
	for bound, want := range map[string]string{"p50=3us": Pass, "p50=1us": Fail} {
		l, _ := ParseLat(bound)
		if v := JudgeResult(&r, nil, Expectations{Lat: l})[0]; v.Verdict != want || !v.Interval {
			t.Errorf("%s: %s, want %s", bound, v, want)
		}
	}
}

// TestJudgeMesh: each pair of a mesh is judged on its own, named after it,
// with its own end's port rate; a pair without results has no verdict.
func TestJudgeMesh(t *testing.T) {
	bw90, _ := ParseBW("90%")
	fast, slow := bwResult(97, 98, 96.5), bwResult(60, 61, 59)
	doc := &result.MeshDocument{Pairs: []result.MeshPair{
		{Client: 0, Server: 1, ClientHost: "a", ServerHost: "b", Env: &result.Env{Device: "mlx5_0", Port: 1, LinkDataGbps: 100}, Results: []result.Result{fast}},
		{Client: 1, Server: 0, ClientHost: "b", ServerHost: "a", Env: &result.Env{Device: "mlx5_0", Port: 1, LinkDataGbps: 100}, Results: []result.Result{slow}},
		{Client: 0, Server: 2, ClientHost: "a", ServerHost: "c", Status: result.StatusFailed},
	}}
	vs := JudgeMesh(doc, Expectations{BW: bw90})
	if len(vs) != 2 || vs[0].Verdict != Pass || vs[1].Verdict != Fail {
		t.Fatalf("%v", vs)
	}
	if !strings.HasPrefix(vs[1].Test, doc.Pairs[1].Name()+": ") {
		t.Errorf("test %q not named after its pair %q", vs[1].Test, doc.Pairs[1].Name())
	}
	var b strings.Builder
	if err := Write(&b, vs); err != nil || !strings.Contains(b.String(), "expectations: 1 pass, 1 fail, 0 cannot tell") {
		t.Errorf("Write: %v\n%s", err, b.String())
	}
}
