package expect

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// BW is a floor on a bandwidth test's bandwidth: a fraction of the port's
// data rate (Fraction, in (0, 1]) or an absolute rate (Gbps, 10^9 bit/s).
type BW struct {
	Fraction float64 // of the port's data rate after line encoding; 0: absolute
	Gbps     float64 // absolute floor, 10^9 bit/s; 0: a fraction
	Text     string  // as given, e.g. "90%" or "375Gb/s"
}

// Lat is a ceiling on a latency test's percentile: Figure ("p50") at most
// MaxNS.
type Lat struct {
	Figure string  // "p50", "p99.9"
	P      float64 // the percentile, e.g. 99.9
	MaxNS  float64 // ns
	Text   string  // as given, e.g. "p50=2.5us"
}

// Expectations are the bounds of one run; the zero value expects nothing.
type Expectations struct {
	BW  *BW
	Lat []Lat
}

// Any reports whether e holds a bound.
func (e Expectations) Any() bool { return e.BW != nil || len(e.Lat) > 0 }

// rateUnits are the units --expect-bw accepts after a number, as a factor
// to 10^9 bit/s: bits (Gb/s, Gbps, Gbit/s, Mb/s, ...) and bytes (GB/s,
// MB/s), decimal prefixes only.
var rateUnits = []struct {
	name   string
	toGbps float64
}{
	{"Tb/s", 1e3}, {"Tbps", 1e3}, {"Tbit/s", 1e3},
	{"Gb/s", 1}, {"Gbps", 1}, {"Gbit/s", 1},
	{"Mb/s", 1e-3}, {"Mbps", 1e-3}, {"Mbit/s", 1e-3},
	{"GB/s", 8}, {"MB/s", 8e-3},
}

// RateUnits lists the units --expect-bw accepts, for help and errors.
func RateUnits() string {
	var s []string
	for _, u := range rateUnits {
		s = append(s, u.name)
	}
	return strings.Join(s, ", ")
}

// ParseBW reads --expect-bw: "90%" (of the port's data rate, in (0, 100])
// or a rate with a unit of RateUnits, such as "375Gb/s" or "5GB/s".
func ParseBW(s string) (*BW, error) {
	t := strings.TrimSpace(s)
	if pct, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, fmt.Errorf("--expect-bw %q: want a percentage of the port's data rate in (0, 100], such as 90%%", s)
		}
		return &BW{Fraction: v / 100, Text: t}, nil
	}
	for _, u := range rateUnits {
		num, ok := strings.CutSuffix(t, u.name)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || v*u.toGbps > 1e6 {
			return nil, fmt.Errorf("--expect-bw %q: want a positive rate, such as 375Gb/s", s)
		}
		return &BW{Gbps: v * u.toGbps, Text: t}, nil
	}
	return nil, fmt.Errorf("--expect-bw %q: want PCT%% of the port's data rate (90%%) or a rate with a unit of %s (375Gb/s, 5GB/s)", s, RateUnits())
}

// ParseLat reads --expect-lat: "p50=2.5us,p99=5us", each a percentile and
// a duration in ns, us or ms.
func ParseLat(s string) ([]Lat, error) {
	var out []Lat
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		fig, val, ok := strings.Cut(part, "=")
		fig, val = strings.TrimSpace(fig), strings.TrimSpace(val)
		p, perr := strconv.ParseFloat(strings.TrimPrefix(fig, "p"), 64)
		if !ok || !strings.HasPrefix(fig, "p") || perr != nil || !(p > 0 && p < 100) {
			return nil, fmt.Errorf("--expect-lat %q: want PERCENTILE=DURATION, such as p50=2.5us (percentile p0 < pN < p100)", part)
		}
		ns, err := parseNS(val)
		if err != nil {
			return nil, fmt.Errorf("--expect-lat %q: %v", part, err)
		}
		label := result.PercentileLabel(p)
		if slices.ContainsFunc(out, func(l Lat) bool { return l.P == p }) {
			return nil, fmt.Errorf("--expect-lat: %s bounded twice", label)
		}
		out = append(out, Lat{Figure: label, P: p, MaxNS: ns, Text: label + "=" + val})
	}
	return out, nil
}

// parseNS reads a duration with a unit of ns, us or ms.
func parseNS(v string) (float64, error) {
	for _, u := range []struct {
		name string
		ns   float64
	}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}} {
		if num, ok := strings.CutSuffix(v, u.name); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || !(f > 0) || f*u.ns > 1e12 {
				return 0, fmt.Errorf("duration %q: want a positive number with a unit of ns, us or ms", v)
			}
			return f * u.ns, nil
		}
	}
	return 0, fmt.Errorf("duration %q: want a unit of ns, us or ms, such as 2.5us", v)
}

// CheckSpecs refuses expectations the tests cannot judge: --expect-bw
// without a bandwidth test, --expect-lat without a latency test or naming
// a percentile a latency test does not report (--percentiles).
func (e Expectations) CheckSpecs(specs []spec.Spec) error {
	var bw, lat bool
	for _, s := range specs {
		switch s.Mode {
		case result.ModeBW:
			bw = true
		case result.ModeLat:
			lat = true
			ps := s.Percentiles
			if len(ps) == 0 {
				ps = result.DefaultPercentiles
			}
			for _, l := range e.Lat {
				if !slices.Contains(ps, l.P) {
					var have []string
					for _, p := range ps {
						have = append(have, result.PercentileLabel(p))
					}
					return fmt.Errorf("--expect-lat %s: the latency tests report %s, not %s (add it to --percentiles)", l.Text, strings.Join(have, ", "), l.Figure)
				}
			}
		}
	}
	if e.BW != nil && !bw {
		return fmt.Errorf("--expect-bw %s: no bandwidth test to judge (add --mode bw)", e.BW.Text)
	}
	if len(e.Lat) > 0 && !lat {
		return fmt.Errorf("--expect-lat %s: no latency test to judge (add --mode lat)", e.Lat[0].Text)
	}
	return nil
}
