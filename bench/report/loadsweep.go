package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// WriteLoadSweeps writes each latency-against-load sweep: the latency
// percentiles (µs) at every offered load, what the load achieved, and the
// knee.
func WriteLoadSweeps(w io.Writer, sweeps []result.LoadSweep, unit string) error {
	var b strings.Builder
	for _, s := range sweeps {
		_, label, _ := result.Bandwidth{}.In(unit)
		b.WriteString(Note(fmt.Sprintf("latency against load: %s probed open loop at %g ops/s; load: %d QPs of %s %s, peak %.0f msgs/s (%s %s)",
			s.Test, s.ProbeRate, s.LoadQPs, s.LoadOp, result.SizeName(s.LoadSize), s.PeakMsgsPerSec, bwIn(s.PeakMBPerSec, unit), label)))
		t := Table{{Head: "offered[%]"}, {Head: "offered[msgs/s]"}, {Head: "achieved[msgs/s]"}, {Head: "achieved[" + label + "]"},
			{Head: "p50[usec]"}, {Head: "p99[usec]"}, {Head: "p99.9[usec]"}}
		var rows [][]string
		for _, p := range s.Points {
			rows = append(rows, []string{strconv.FormatFloat(p.Offered*100, 'f', -1, 64), strconv.FormatFloat(p.OfferedMsgsPerSec, 'f', 0, 64),
				strconv.FormatFloat(p.AchievedMsgsPerSec, 'f', 0, 64), bwIn(p.AchievedMBPerSec, unit),
				p.P50.US(), p.P99.US(), p.P99_9.US()})
		}
		t.Write(&b, rows)
		if s.Knee != nil {
			fmt.Fprintf(&b, "knee: p99 exceeds twice its unloaded value from %g%% of the peak\n", *s.Knee*100)
		} else {
			b.WriteString("knee: none (p99 stays within twice its unloaded value at every load measured)\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bwIn formats mb 10^6 bytes/s in unit with 2 decimals.
func bwIn(mb float64, unit string) string {
	v, _, _ := result.Bandwidth{MBPerSec: mb, MiBPerSec: mb * 1e6 / (1 << 20), GbitPerSec: mb * 8 / 1e3}.In(unit)
	return strconv.FormatFloat(v, 'f', 2, 64)
}
