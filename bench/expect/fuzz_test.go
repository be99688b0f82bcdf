package expect

import (
	"math"
	"testing"
)

// FuzzParse: the flag parsers never panic, and what they accept is a
// finite positive bound.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"90%", "375Gb/s", "5GB/s", "p50=2.5us,p99=5us", "p99.9=1ms", "", "%", "p=us", "1e309Gb/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBW(s); err == nil {
			if !(b.Fraction > 0 && b.Fraction <= 1) && !(b.Gbps > 0 && !math.IsInf(b.Gbps, 0)) {
				t.Errorf("ParseBW(%q) = %+v", s, b)
			}
		}
		if ls, err := ParseLat(s); err == nil {
			for _, l := range ls {
				if !(l.MaxNS > 0) || math.IsInf(l.MaxNS, 0) || !(l.P > 0 && l.P < 100) {
					t.Errorf("ParseLat(%q): %+v", s, l)
				}
			}
		}
	})
}
