package result

// The checks of a document's values on reading (ReadJSONFile, ParseMesh,
// ReadCliffs, ReadIsolation, ReadDoctor, CheckMR): what no measurement can
// produce is an error naming the field, before compare, report, plot or the
// gate use it. docs/output.md ("What a reader accepts") lists the rules;
// the shipped JSON Schemas say the same where a schema can
// (TestSchemaAgreesWithCheck, bench/result/agree_test.go).

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ValueError is a value of a document that no measurement produces: Path
// is its JSON path ("results[2].latency_ns.p99").
type ValueError struct {
	Path string
	Err  error
}

func (e *ValueError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ValueError) Unwrap() error { return e.Err }

// ErrBadValue is what every ValueError wraps.
var ErrBadValue = errors.New("impossible value")

// The bounds of what rdmabench (and perftest) can write; bench/spec's
// limits (spec.MaxSize, MaxIters, MaxDuration, MaxQPs, MaxRepeat) are at or
// under them (TestCheckBoundsCoverSpec in bench/spec).
const (
	MaxSizeBytes    = 1 << 30         // bytes per message (spec.MaxSize)
	MaxIterations   = 1 << 40         // iterations of one test (spec.MaxIters)
	MaxDurationNS   = 1e9 * 86400 * 7 // a week: a test (spec.MaxDuration is a day) or a whole run
	MaxLatencyNS    = 1e9 * 86400     // a day: no one operation takes longer
	MaxMBPerSec     = 1e8             // 800 Tb/s: beyond any link
	MaxMpps         = 1e5             // 10^11 messages/s
	MaxQPCount      = 1 << 16         // QPs and threads of one test (spec.MaxQPs and load QPs)
	MaxRuns         = 1000            // --repeat (spec.MaxRepeat) and cliffs/isolation runs
	MaxDepth        = 1 << 20         // tx/rx depth, CQ moderation, inline bytes
	MaxListLength   = 1 << 16         // results, intervals, pairs, points of one document
	MaxHistogramB64 = 1 << 20         // the encoded histogram of one result, bytes
)

// Roles are the values of Document.Role: rdmabench's run, loopback and
// drop-in server, perftest's client and server sides (import), and
// `rdmabench mr`.
var Roles = []string{"loopback", "client", "server", "dropin-server", "mr"}

// checker walks a document; the first failure is kept.
type checker struct{ err error }

func (c *checker) fail(path, format string, args ...any) {
	if c.err == nil {
		c.err = &ValueError{path, fmt.Errorf("%w: "+format, append([]any{ErrBadValue}, args...)...)}
	}
}

func (c *checker) ok() bool { return c.err == nil }

// finite checks that v is a finite number in [lo, hi].
func (c *checker) within(path string, v, lo, hi float64, what string) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		c.fail(path, "%s %v is not a number", what, v)
	case v < 0 && lo == 0:
		c.fail(path, "negative %s %s%s", what, num(v), unitOf(what))
	case v < lo:
		c.fail(path, "%s %s is below %s", what, num(v), num(lo))
	case v > hi:
		c.fail(path, "%s %s is above %s, more than rdmabench can produce", what, num(v), num(hi))
	}
}

func (c *checker) intWithin(path string, v, lo, hi int64, what string) {
	switch {
	case v < lo:
		c.fail(path, "%s %d is below %d", what, v, lo)
	case v > hi:
		c.fail(path, "%s %d is above %d, more than rdmabench can produce", what, v, hi)
	}
}

func (c *checker) oneOf(path, v string, vocab []string, what string, emptyOK bool) {
	if v == "" && emptyOK {
		return
	}
	if !slices.Contains(vocab, v) {
		c.fail(path, "%s %q is not one of %s", what, v, strings.Join(vocab, ", "))
	}
}

func (c *checker) listLen(path string, n int) {
	if n > MaxListLength {
		c.fail(path, "%d entries, more than %d", n, MaxListLength)
	}
}

// Check checks doc whole: the document (schema version, role, results
// present), and each result (checkResult: the vocabulary, sizes,
// iterations, durations and rates in range, each latency consistent, the
// histogram decoding and agreeing with its count), and that no test
// appears twice. The first failure is a *ValueError.
func (doc *Document) Check() error {
	var c checker
	c.document(doc)
	return c.err
}

func (c *checker) document(doc *Document) {
	c.header(doc.Header(), KindResult)
	c.oneOf("role", doc.Role, Roles, "role", false)
	if doc.Tool == "" {
		c.fail("tool", "no tool: not an rdmabench document")
	}
	if !doc.Start.IsZero() && !doc.End.IsZero() && doc.End.Before(doc.Start) {
		c.fail("end_time", "ends before it starts (%s < %s)", doc.End.Format("2006-01-02T15:04:05Z07:00"), doc.Start.Format("2006-01-02T15:04:05Z07:00"))
	}
	if doc.PeakRSSBytes < 0 {
		c.fail("peak_rss_bytes", "negative size %d", doc.PeakRSSBytes)
	}
	c.env("environment", &doc.Env)
	if doc.ServerEnv != nil {
		c.env("server_environment", doc.ServerEnv)
	}
	if doc.Role == "mr" {
		return // the mr section is CheckMR's; results stay empty
	}
	if len(doc.Results) == 0 {
		c.fail("results", "no results: the document holds no test")
	}
	c.results("results", doc.Results)
}

// results checks each result and that no test is there twice.
func (c *checker) results(path string, rs []Result) {
	c.listLen(path, len(rs))
	seen := map[string]int{}
	for i := range rs {
		p := fmt.Sprintf("%s[%d]", path, i)
		c.result(p, &rs[i])
		id := testID(&rs[i])
		if j, dup := seen[id]; dup {
			c.fail(p, "the test %s is also %s[%d]: each test is in a document once", KeyOf(&rs[i]), path, j)
		}
		seen[id] = i
		if !c.ok() {
			return
		}
	}
}

// testID tells the tests of one document apart: the key and the settings
// a run may vary between tests of one key (the load of a load sweep, the
// open-loop rate, QPs, direction, QP type, MR mode).
func testID(r *Result) string {
	id := KeyOf(r).String()
	if r.Load != nil {
		id += fmt.Sprintf(" load %d %s %d", r.Load.QPs, r.Load.Op, r.Load.SizeBytes)
	}
	if r.OpenLoop != nil {
		id += fmt.Sprintf(" rate %g %s", r.OpenLoop.RateTarget, r.OpenLoop.Schedule)
	}
	if r.RateLimit != nil {
		id += fmt.Sprintf(" shaped %+v", *r.RateLimit)
	}
	return id + fmt.Sprintf(" qps %d threads %d bidir %v qp %s mr %s event %v", r.QPs, r.Threads, r.Bidirectional, r.QPType, r.MRMode, r.Event)
}

func (c *checker) env(path string, e *Env) {
	c.intWithin(path+".num_cpu", int64(e.NumCPU), 0, 1<<20, "CPU count")
	c.intWithin(path+".active_mtu", int64(e.ActiveMTU), 0, 1<<20, "MTU")
	c.intWithin(path+".path_mtu", int64(e.PathMTU), 0, 1<<20, "MTU")
	c.within(path+".link_gbps", e.LinkGbps, 0, 1e6, "link rate")
	c.within(path+".link_data_gbps", e.LinkDataGbps, 0, 1e6, "link rate")
	c.within(path+".clock_rate_hz", e.ClockRateHz, 0, 1e12, "clock rate")
	c.within(path+".clock_read_cost_ns", e.ClockReadCostNS, 0, MaxLatencyNS, "clock read cost")
	if e.ClockResolutionNS < 0 {
		c.fail(path+".clock_resolution_ns", "negative resolution %d", e.ClockResolutionNS)
	}
}

// QP types as a result's qp_type spells them.
var resultQPTypes = []string{"RC", "UC", "UD", "rc", "uc", "ud"}

func (c *checker) result(path string, r *Result) {
	c.oneOf(path+".op", r.Op, Ops, "op", false)
	c.oneOf(path+".mode", r.Mode, Modes, "mode", false)
	c.oneOf(path+".transport", r.Transport, []string{TransportRDMA, TransportTCP}, "transport", true)
	c.oneOf(path+".qp_type", r.QPType, resultQPTypes, "QP type", true)
	c.oneOf(path+".mr_mode", r.MRMode, MRModes, "MR mode", true)
	c.intWithin(path+".size_bytes", int64(r.SizeBytes), 1, MaxSizeBytes, "message size")
	c.intWithin(path+".iterations", r.Iterations, 1, MaxIterations, "iteration count")
	c.intWithin(path+".warmup_iterations", r.Warmup, 0, MaxIterations, "iteration count")
	c.intWithin(path+".duration_ns", r.DurationNS, 0, MaxDurationNS, "duration")
	for _, d := range []struct {
		name string
		v    int
	}{{"tx_depth", r.TxDepth}, {"cq_mod", r.CQMod}, {"rx_depth", r.RxDepth}, {"inline_bytes", r.Inline},
		{"qp_timeout", r.QPTimeout}, {"retry_count", r.RetryCount}, {"rnr_retry", r.RNRRetry},
		{"outstanding_reads", r.OutstandingReads}, {"post_list", r.PostList}} {
		c.intWithin(path+"."+d.name, int64(d.v), 0, MaxDepth, d.name)
	}
	c.intWithin(path+".qps", int64(r.QPs), 0, MaxQPCount, "QP count")
	c.intWithin(path+".threads", int64(r.Threads), 0, MaxQPCount, "thread count")
	c.intWithin(path+".lost_messages", r.LostMessages, 0, MaxIterations, "message count")
	c.within(path+".link_utilization", r.LinkUtilization, 0, 1000, "link utilization") // software RDMA loopback exceeds 1
	c.within(path+".histogram_divisor", r.HistogramDivisor, 0, 2, "histogram divisor")
	c.intWithin(path+".samples", r.Samples, 0, MaxIterations, "sample count")
	c.bandwidth(path+".bandwidth", r.Bandwidth)
	if r.PerftestPeak != nil {
		c.bandwidth(path+".perftest_peak", *r.PerftestPeak)
	}
	if r.Iterations == 0 && (r.Bandwidth.MBPerSec > 0 || r.Bandwidth.Mpps > 0) {
		c.fail(path+".bandwidth.mb_per_s", "a rate of %s MB/s without iterations", num(r.Bandwidth.MBPerSec))
	}
	c.latency(path+".latency_ns", &r.Latency)
	if r.RTT != nil {
		c.latency(path+".rtt_ns", r.RTT)
	}
	if r.Latency.Count > r.Iterations*2+r.Warmup*2+1 && r.Iterations > 0 {
		// bw tests count completions, bidirectional tests both sides'
		c.fail(path+".latency_ns.count", "%d samples of %d iterations", r.Latency.Count, r.Iterations)
	}
	c.listLen(path+".per_qp", len(r.PerQP))
	for j := range r.PerQP {
		c.latency(fmt.Sprintf("%s.per_qp[%d].latency_ns", path, j), &r.PerQP[j].Latency)
	}
	c.listLen(path+".runs", len(r.Runs))
	if len(r.Runs) > MaxRuns {
		c.fail(path+".runs", "%d runs, more than %d", len(r.Runs), MaxRuns)
	}
	for j := range r.Runs {
		p := fmt.Sprintf("%s.runs[%d]", path, j)
		c.intWithin(p+".iterations", r.Runs[j].Iterations, 0, MaxIterations, "iteration count")
		c.intWithin(p+".duration_ns", r.Runs[j].DurationNS, 0, MaxDurationNS, "duration")
		c.bandwidth(p+".bandwidth", r.Runs[j].Bandwidth)
		c.latency(p+".latency_ns", &r.Runs[j].Latency)
	}
	c.listLen(path+".intervals", len(r.Intervals))
	for j, iv := range r.Intervals {
		p := fmt.Sprintf("%s.intervals[%d]", path, j)
		c.intWithin(p+".start_ns", iv.StartNS, 0, MaxDurationNS, "time")
		c.intWithin(p+".end_ns", iv.EndNS, iv.StartNS, MaxDurationNS, "end")
		c.intWithin(p+".ops", iv.Ops, 0, MaxIterations, "operation count")
		c.bandwidth(p+".bandwidth", iv.Bandwidth)
		c.ordered(p, []named{{"p50_ns", iv.P50}, {"p99_ns", iv.P99}})
	}
	if r.OpenLoop != nil {
		c.oneOf(path+".open_loop.schedule", r.OpenLoop.Schedule, []string{ScheduleConstant, SchedulePoisson}, "schedule", false)
		c.within(path+".open_loop.rate_target", r.OpenLoop.RateTarget, 0, 1e10, "rate")
		c.within(path+".open_loop.rate_achieved", r.OpenLoop.RateAchieved, 0, 1e10, "rate")
	}
	if r.Load != nil {
		c.oneOf(path+".load.op", r.Load.Op, Ops, "op", false)
		c.intWithin(path+".load.size_bytes", int64(r.Load.SizeBytes), 0, MaxSizeBytes, "message size")
		c.intWithin(path+".load.qps", int64(r.Load.QPs), 0, MaxQPCount, "QP count")
		c.bandwidth(path+".load.bandwidth", r.Load.Bandwidth)
	}
	if len(r.Histogram) > MaxHistogramB64 {
		c.fail(path+".histogram", "%d bytes of histogram, more than %d", len(r.Histogram), MaxHistogramB64)
	}
	if r.Histogram != "" && c.ok() {
		h, err := r.DecodeHistogram()
		switch {
		case err != nil:
			c.fail(path+".histogram", "does not decode: %v", err)
		case h.Count() != r.Samples:
			c.fail(path+".histogram", "holds %d values, samples says %d", h.Count(), r.Samples)
		case len(r.Runs) == 0 && r.Latency.Count != h.Count():
			c.fail(path+".latency_ns.count", "%d, but the histogram beside it holds %d values", r.Latency.Count, h.Count())
		case len(r.Runs) == 0 && h.Count() > 0:
			// min and max are exact in both: the summary is the histogram's
			div := Divisor(r.HistogramDivisor)
			if lo := float64(h.Min()) / div; !near(r.Latency.Min, lo) {
				c.fail(path+".latency_ns.min", "%s ns, but the histogram beside it starts at %s ns", num(r.Latency.Min), num(lo))
			} else if hi := float64(h.Max()) / div; !near(r.Latency.Max, hi) {
				c.fail(path+".latency_ns.max", "%s ns, but the histogram beside it ends at %s ns", num(r.Latency.Max), num(hi))
			}
		}
	}
}

func (c *checker) bandwidth(path string, b Bandwidth) {
	c.within(path+".mb_per_s", b.MBPerSec, 0, MaxMBPerSec, "rate")
	c.within(path+".mib_per_s", b.MiBPerSec, 0, MaxMBPerSec, "rate")
	c.within(path+".gbit_per_s", b.GbitPerSec, 0, MaxMBPerSec*8/1e3, "rate")
	c.within(path+".mpps", b.Mpps, 0, MaxMpps, "message rate")
}

// named is one value of an ordered sequence, by its JSON name.
type named struct {
	name string
	v    Nanos
}

// latency checks a distribution: a count ≥ 0, values only where there
// are samples, every value a finite latency, min ≤ p50 ≤ ... ≤ p99.99 ≤
// max, mean within min..max, percentiles in order and within min..max.
func (c *checker) latency(path string, l *Latency) {
	c.intWithin(path+".count", l.Count, 0, MaxIterations, "sample count")
	for _, f := range []struct {
		name string
		v    float64
	}{{"min", l.Min}, {"mean", l.Mean}, {"stdev", l.Stdev}, {"max", l.Max}} {
		c.within(path+"."+f.name, f.v, 0, MaxLatencyNS, "latency")
	}
	seq := []named{{"p50", l.P50}, {"p90", l.P90}, {"p99", l.P99}, {"p99_9", l.P99_9}, {"p99_99", l.P99_99}}
	c.within(path+".confidence", l.Confidence, 0, 1, "confidence")
	c.listLen(path+".percentiles", len(l.Percentiles))
	if l.Count == 0 {
		for _, s := range seq {
			if s.v.OK {
				c.fail(path+"."+s.name, "%s ns without samples (count is 0)", num(s.v.NS))
			}
		}
		if l.Min != 0 || l.Max != 0 || l.Mean != 0 || l.Stdev != 0 {
			c.fail(path+".count", "0, but min, mean or max has a value")
		}
		for j, q := range l.Percentiles {
			if q.Value.OK {
				c.fail(fmt.Sprintf("%s.percentiles[%d].value", path, j), "%s ns without samples (count is 0)", num(q.Value.NS))
			}
		}
		return
	}
	bounded := l.Min > 0 || l.Max > 0 // perftest's t_avg-only rows carry no min and max
	if bounded {
		seq = append([]named{{"min", Nanos{l.Min, true}}}, append(seq, named{"max", Nanos{l.Max, true}})...)
	}
	c.ordered(path, seq)
	// the mean and the percentiles come from the histogram, min and max are
	// exact: they may differ by the histogram's resolution (near)
	if bounded && ((l.Mean < l.Min && !near(l.Mean, l.Min)) || (l.Mean > l.Max && !near(l.Mean, l.Max))) {
		c.fail(path+".mean", "%s ns is outside min..max (%s..%s ns)", num(l.Mean), num(l.Min), num(l.Max))
	}
	prevP, prevV := 0.0, -1.0
	for j, q := range l.Percentiles {
		p := fmt.Sprintf("%s.percentiles[%d]", path, j)
		if !(q.P > 0 && q.P < 100) {
			c.fail(p+".p", "percentile %s is not in (0, 100)", num(q.P))
		} else if q.P <= prevP {
			c.fail(p+".p", "percentile %s follows %s: not in increasing order", num(q.P), num(prevP))
		}
		prevP = q.P
		for _, v := range []named{{"value", q.Value}, {"ci_low", q.CILow}, {"ci_high", q.CIHigh}} {
			if !v.v.OK {
				continue
			}
			c.within(p+"."+v.name, v.v.NS, 0, MaxLatencyNS, "latency")
			if v.name == "value" && bounded && ((v.v.NS < l.Min && !near(v.v.NS, l.Min)) || (v.v.NS > l.Max && !near(v.v.NS, l.Max))) {
				c.fail(p+"."+v.name, "%s ns is outside min..max (%s..%s ns)", num(v.v.NS), num(l.Min), num(l.Max))
			}
		}
		if q.Value.OK {
			if q.Value.NS < prevV {
				c.fail(p+".value", "%s ns is below the previous percentile's %s ns (out of order)", num(q.Value.NS), num(prevV))
			}
			prevV = q.Value.NS
		}
	}
}

// ordered checks that the present values of seq are finite latencies that
// do not decrease.
func (c *checker) ordered(path string, seq []named) {
	var prev *named
	for i := range seq {
		s := &seq[i]
		if !s.v.OK {
			continue
		}
		c.within(path+"."+s.name, s.v.NS, 0, MaxLatencyNS, "latency")
		if prev != nil && s.v.NS < prev.v.NS && !near(s.v.NS, prev.v.NS) {
			c.fail(path+"."+s.name, "%s ns is below %s's %s ns (out of order)", num(s.v.NS), prev.name, num(prev.v.NS))
		}
		prev = s
	}
}

// near reports whether a and b agree to the histogram's resolution (0.1 %)
// and half a nanosecond.
func near(a, b float64) bool { return math.Abs(a-b) <= 0.002*math.Max(math.Abs(a), math.Abs(b))+0.5 }

// unitOf is the unit said after a value of what.
func unitOf(what string) string {
	if what == "latency" {
		return " ns"
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
