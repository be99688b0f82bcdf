package hostenv

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestClockShareWarning(t *testing.T) {
	ns := func(v float64) result.Nanos { return result.Nanos{NS: v, OK: true} }
	lat := func(p50 result.Nanos) result.Result { return result.Result{Latency: result.Latency{P50: p50}} }
	half := func(p50, rtt float64) result.Result { // SEND/WRITE latency: half the round trip reported
		r := lat(ns(p50))
		r.RTT = &result.Latency{P50: ns(rtt)}
		return r
	}
	for _, c := range []struct {
		name  string
		cost  float64
		r     result.Result
		share string // "" = no warning
	}{
		{"vDSO TSC read, hardware half RTT 1 us", 20, half(1000, 2000), ""},
		{"150 ns read, 1 us half RTT: 7.5 % of the RTT", 150, half(1000, 2000), "8 %"},
		{"the RTT decides, not the half", 90, half(1000, 2000), ""}, // 4.5 % of 2000, 9 % of 1000
		{"hpet read on rxe: 1 us of a 25 us RTT", 1000, half(12500, 25000), ""},
		{"hpet read on a hardware NIC", 1000, half(900, 1800), "56 %"},
		{"exactly 5 %", 50, lat(ns(1000)), ""},
		{"just above 5 %", 51, lat(ns(1000)), "5 %"},
		{"a fixed 200 ns threshold would stay silent here", 120, lat(ns(1500)), "8 %"},
		{"a fixed 200 ns threshold would warn here", 250, lat(ns(60000)), ""},
		{"bandwidth completion latency", 30, lat(ns(40000)), ""},
		{"too few samples: no median", 1000, lat(result.Nanos{}), ""},
		{"cost unknown", 0, lat(ns(100)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ClockShareWarning("write lat 2B", c.cost, c.r)
			switch {
			case c.share == "" && w != "":
				t.Errorf("warned: %s", w)
			case c.share != "" && !strings.Contains(w, c.share+" of the median"):
				t.Errorf("warning %q, want the share %s", w, c.share)
			case c.share != "" && !strings.HasPrefix(w, "write lat 2B: "):
				t.Errorf("warning %q does not name the test", w)
			}
		})
	}
}
