package mr

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// timeLimit describes the time budget per size.
func timeLimit(ns int64) string {
	if ns < 0 {
		return "no time limit"
	}
	return "at most " + time.Duration(ns).String() + " per size"
}

// WriteReport writes the human report of an `rdmabench mr` run: the
// environment header, the registration table (one row per size, then a note
// per skipped size), the WRITE table of pooled against per-op registration
// with their throughput ratio, and the warnings.
func WriteReport(w io.Writer, doc *Document) error {
	if err := report.WriteHeader(w, &doc.Document); err != nil {
		return err
	}
	var b strings.Builder
	m := &doc.MR
	na := false
	us := func(n result.Nanos) string {
		na = na || !n.OK
		return n.US()
	}
	mem := "buffer"
	if m.HugePages {
		mem = "huge-page buffer"
	}
	fmt.Fprintf(&b, "MR registration: ibv_reg_mr + ibv_dereg_mr of one %s, access %s, %d iterations per size (%s)\n",
		mem, m.Access, m.Iterations, timeLimit(m.TimePerSizeNS))
	reg := report.Table{{Head: "size"}, {Head: "#iters"}, {Head: "reg_p50[usec]"}, {Head: "reg_p99[usec]"}, {Head: "reg_max[usec]"},
		{Head: "dereg_p50[usec]"}, {Head: "dereg_p99[usec]"}, {Head: "dereg_max[usec]"}, {Head: "reg_rate[GB/s]"}}
	var rows [][]string
	for _, r := range m.Registration {
		rate := "n/a"
		if r.RegGBPerSec > 0 {
			rate = strconv.FormatFloat(r.RegGBPerSec, 'f', 2, 64)
		}
		rows = append(rows, []string{report.SizeLabel(int64(r.SizeBytes)), strconv.Itoa(r.Iterations),
			us(r.Reg.P50), us(r.Reg.P99), report.US(r.Reg.Max), us(r.Dereg.P50), us(r.Dereg.P99), report.US(r.Dereg.Max), rate})
	}
	reg.Write(&b, rows)
	b.WriteString("reg_rate is size / reg_p50 (10^9 bytes/s)\n")
	for _, s := range m.Skipped {
		b.WriteString("note: " + s.Reason + "\n")
	}
	if o := m.Ops; o != nil {
		fmt.Fprintf(&b, "\nRDMA WRITE of %s to a passive QP on the same device, one at a time: %d per mode after %d warm-up\n",
			report.SizeLabel(int64(o.SizeBytes)), o.Iterations, o.Warmup)
		t := report.Table{{Head: "registration", Left: true}, {Head: "#iters"}, {Head: "lat_p50[usec]"}, {Head: "lat_p99[usec]"},
			{Head: "ops/s"}, {Head: "MB/s"}}
		rows = rows[:0]
		for _, r := range []OpResult{o.Pooled, o.PerOp} {
			rows = append(rows, []string{r.Mode, strconv.Itoa(o.Iterations), us(r.Latency.P50), us(r.Latency.P99),
				strconv.FormatFloat(r.OpsPerSec, 'f', 0, 64), strconv.FormatFloat(r.Bandwidth.MBPerSec, 'f', 2, 64)})
		}
		t.Write(&b, rows)
		fmt.Fprintf(&b, "pooled/per-op throughput ratio: %.2fx\n", o.Ratio)
		for _, r := range []OpResult{o.Pooled, o.PerOp} {
			fmt.Fprintf(&b, "%s: lat_* time %s\n", r.Mode, r.TimedInterval)
		}
	}
	if na {
		b.WriteString(report.Note(report.LatencyNA))
	}
	for _, s := range doc.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
