package hostenv

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// ClockShareLimit is the share of a test's median sample that the clock
// read may cost before the result carries a warning. Every sample spans
// about one clock read (rb_now_ns before and after, each read's cost split
// between the two sides of the interval). With the vDSO a read costs 15-30
// ns: 5 % of a 1 us half round trip of a hardware NIC is 100 ns, which only
// a slow clocksource (hpet, acpi_pm, a trapping hypervisor) reaches.
const ClockShareLimit = 0.05

// ClockShareWarning warns when one clock read (costNS, Env.ClockReadCostNS)
// is more than ClockShareLimit of the test's median sample: the full round
// trip for a latency test that reports half of it (Result.RTT), else the
// latency as reported (a bandwidth test's completion latency). It is ""
// when the cost or the median is unknown (too few samples) or the share is
// small.
func ClockShareWarning(name string, costNS float64, r result.Result) string {
	p50 := r.Latency.P50
	if r.RTT != nil {
		p50 = r.RTT.P50
	}
	if costNS <= 0 || !p50.OK || p50.NS <= 0 {
		return ""
	}
	share := costNS / p50.NS
	if share <= ClockShareLimit {
		return ""
	}
	return fmt.Sprintf("%s: a clock read costs %.0f ns, %.0f %% of the median sample (%.0f ns): every sample includes about one read; "+
		"a TSC clocksource reads in tens of ns", name, costNS, 100*share, p50.NS)
}
