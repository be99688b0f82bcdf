package perftest

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The layout below is perftest 6.x's (RESULT_LINE, RESULT_FMT*, REPORT_FMT*
// in perftest_parameters.h, ctx_print_test_info): the same words, the same
// columns, the same padding and tabs, checked against Debian's perftest
// 6.06 in the guest (internal/e2e, TestDropInLayout).

// resultLine is perftest's dashed separator (87 dashes).
var resultLine = strings.Repeat("-", 87) + "\n"

// Table headers.
const (
	fmtBW     = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
	fmtBWG    = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
	fmtLat    = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
	fmtLatDur = " #bytes        #iterations       t_avg[usec]    tps average\n"
)

// Rows (printf formats).
const (
	rowBW     = " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n"
	rowBWExt  = " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n" // Gb/sec below 0.1
	rowLat    = " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n"
	rowLatDur = " %-7d       %d            %-7.2f        %-7.2f\n"
)

// Side is the end of the test a table is printed on.
type Side int

// The two ends.
const (
	Client Side = iota
	Server
)

// WaitingBanner is what perftest's server prints before a client connects.
const WaitingBanner = "\n************************************\n* Waiting for client to connect... *\n************************************\n"

// WriteHeader writes perftest's test box for one side: the test title and
// the settings, from o, the side's environment env and the first result r
// (the depths, inline size and outstanding reads the test ran with).
func WriteHeader(w io.Writer, o Options, side Side, env result.Env, r result.Result) {
	if o.Output != "" {
		return
	}
	t := o.Tool
	var b strings.Builder
	b.WriteString(resultLine)
	b.WriteString("                    " + t.title() + " ")
	if t.Verb == Atomic {
		b.WriteString(strings.ToUpper(o.atomicType()) + " ")
	}
	if t.Lat {
		b.WriteString("Latency ")
	} else {
		if o.Bidir {
			b.WriteString("Bidirectional ")
		}
		if o.PostList > 1 {
			b.WriteString("Post List ")
		}
		b.WriteString("BW ")
	}
	b.WriteString("Test\n")
	if o.Events {
		fmt.Fprintf(&b, " Test with events. Using %s_comp%d\n", env.Device, 0)
	}
	fmt.Fprintf(&b, " Dual-port       : OFF\t\tDevice         : %s\n", env.Device)
	transport := "IB"
	if env.Transport == "iWARP" {
		transport = "IW"
	}
	fmt.Fprintf(&b, " Number of qps   : %d\t\tTransport type : %s\n", o.QPsOrDefault(), transport)
	fmt.Fprintf(&b, " Connection type : %s\t\tUsing SRQ      : %s\n", o.ConnOrDefault(), onOff(o.SRQ))
	fmt.Fprintf(&b, " PCIe relax order: %s\n", onOff(!o.NoRelaxed)) // what was requested (bench/choices.go)
	b.WriteString(" ibv_wr* API     : OFF\n")                       // it posts with ibv_post_send
	if side == Client || o.Bidir {
		tx := 1
		if !t.Lat {
			tx = r.TxDepth
		}
		fmt.Fprintf(&b, " TX depth        : %d\n", tx)
	}
	if o.PostList > 1 {
		fmt.Fprintf(&b, " Post List       : %d\n", o.PostList)
	}
	if t.Verb == Send && (side == Server || o.Bidir) {
		fmt.Fprintf(&b, " RX depth        : %d\n", r.RxDepth)
	}
	if !t.Lat {
		fmt.Fprintf(&b, " CQ Moderation   : %d\n", r.CQMod)
	}
	mtu := env.PathMTU
	if mtu == 0 {
		mtu = env.ActiveMTU
	}
	fmt.Fprintf(&b, " Mtu             : %d[B]\n", mtu)
	link := env.LinkLayer
	if link == "InfiniBand" {
		link = "IB"
	}
	fmt.Fprintf(&b, " Link type       : %s\n", link)
	if env.GIDIndex >= 0 && (link != "IB" || o.GIDIndex >= 0) {
		fmt.Fprintf(&b, " GID index       : %d\n", env.GIDIndex)
	}
	if t.readsOrAtomics() {
		fmt.Fprintf(&b, " Outstand reads  : %d\n", r.OutstandingReads)
	} else {
		fmt.Fprintf(&b, " Max inline data : %d[B]\n", r.Inline)
	}
	fmt.Fprintf(&b, " rdma_cm QPs\t : %s\n", onOff(o.RDMACM))
	method := "Ethernet"
	if o.RDMACM {
		method = "rdma_cm"
	}
	fmt.Fprintf(&b, " Data ex. method : %s\n", method)
	b.WriteString(resultLine)
	io.WriteString(w, b.String())
}

func (o Options) atomicType() string {
	if o.AtomicType == "" {
		return "FETCH_AND_ADD"
	}
	return o.AtomicType
}

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// WriteTable writes perftest's result table for rs, the side's results in
// size order: the table header, one row per result and the closing line.
// Latency tests in iterations mode print perftest's nine columns (t_typical
// is the median; the percentiles come from the histogram at its resolution,
// without rdmabench's n/a rule, as perftest prints them whatever the count),
// in duration mode its four; bandwidth tests print MB/sec (2^20 bytes/s,
// perftest's) or, with --report_gbits, Gb/sec (10^9 bit/s). With --output
// it writes one bare number per result instead (WriteOutput). With -H the
// samples come first, sorted, at the histogram's resolution.
func WriteTable(w io.Writer, o Options, side Side, rs []result.Result) error {
	if o.Output != "" {
		return WriteOutput(w, o, rs)
	}
	var b strings.Builder
	b.WriteString(resultLine)
	switch {
	case o.Tool.Lat && o.Duration > 0:
		b.WriteString(fmtLatDur)
		for _, r := range rs {
			fmt.Fprintf(&b, rowLatDur, r.SizeBytes, r.Iterations, latDurAvg(o, r)/1000, tps(r))
		}
	case o.Tool.Lat:
		b.WriteString(fmtLat)
		for _, r := range rs {
			row, err := latRow(r)
			if err != nil {
				return err
			}
			if o.Histogram {
				if err := writeSamples(&b, r); err != nil {
					return err
				}
				b.WriteString(resultLine + fmtLat)
			}
			b.WriteString(row)
		}
	default:
		if o.ReportGbits {
			b.WriteString(fmtBWG)
		} else {
			b.WriteString(fmtBW)
		}
		for _, r := range rs {
			avg, peak := bwFigures(o, r)
			row := rowBW
			if o.ReportGbits && avg < 0.1 {
				row = rowBWExt
			}
			fmt.Fprintf(&b, row, r.SizeBytes, iterations(o, side, r), peak, avg, r.Bandwidth.Mpps)
		}
	}
	b.WriteString(resultLine)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteOutput writes --output's one number per result, as perftest's
// "%lf\n": the mean latency in usec (perftest: "Latency measurement is
// Average calculation"), the average bandwidth in the report's unit, or
// the message rate in Mpps.
func WriteOutput(w io.Writer, o Options, rs []result.Result) error {
	for _, r := range rs {
		var v float64
		switch o.Output {
		case "latency":
			if !o.Tool.Lat {
				return &UsageError{Flag: "--output", Err: fmt.Errorf("latency: %s is a bandwidth test", o.Tool.Name)}
			}
			v = r.Latency.Mean / 1000
			if o.Duration > 0 {
				v = latDurAvg(o, r) / 1000
			}
		case "bandwidth", "message_rate":
			if o.Tool.Lat {
				return &UsageError{Flag: "--output", Err: fmt.Errorf("%s: %s is a latency test", o.Output, o.Tool.Name)}
			}
			v, _ = bwFigures(o, r)
			if o.Output == "message_rate" {
				v = r.Bandwidth.Mpps
			}
		}
		if _, err := fmt.Fprintf(w, "%f\n", v); err != nil {
			return err
		}
	}
	return nil
}

// latRow is the nine-column row of a latency result.
func latRow(r result.Result) (string, error) {
	l := r.Latency
	p99, p999, err := tailPercentiles(r)
	if err != nil {
		return "", err
	}
	p50 := l.P50.NS
	if !l.P50.OK && r.Histogram != "" { // too few samples (-a -n 5): the middle one, as perftest's t_typical
		if h, err := r.DecodeHistogram(); err == nil && h.Count() > 0 {
			p50 = min(max(float64(h.ValueAtRank(int64(math.Ceil(float64(h.Count())*0.5))))/divisor(r), l.Min), l.Max)
		}
	}
	return fmt.Sprintf(rowLat, r.SizeBytes, r.Iterations, l.Min/1000, l.Max/1000, p50/1000, l.Mean/1000, l.Stdev/1000,
		p99/1000, p999/1000), nil
}

// tailPercentiles are r's 99th and 99.9th percentiles in ns. With too few
// samples for rdmabench's n/a rule they are the values at their ranks in
// the histogram (ceil(n·p)), as perftest prints them whatever the count,
// kept within the true minimum and maximum.
func tailPercentiles(r result.Result) (p99, p999 float64, err error) {
	l := r.Latency
	if l.P99.OK && l.P99_9.OK {
		return l.P99.NS, l.P99_9.NS, nil
	}
	h, err := r.DecodeHistogram()
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s %d B: %w", r.Op, r.Mode, r.SizeBytes, err)
	}
	div, n := divisor(r), h.Count()
	at := func(p float64) float64 {
		v := float64(h.ValueAtRank(int64(math.Ceil(float64(n)*p)))) / div
		return min(max(v, l.Min), l.Max)
	}
	return at(0.99), at(0.999), nil
}

// writeSamples writes -H's "#, usec" list: every sample in ascending order,
// each at its histogram bucket's value.
func writeSamples(b *strings.Builder, r result.Result) error {
	h, err := r.DecodeHistogram()
	if err != nil {
		return fmt.Errorf("-H: %s %d B: %w", r.Op, r.SizeBytes, err)
	}
	div := divisor(r)
	b.WriteString("#, usec\n")
	i, n := int64(0), h.Count()
	for _, bk := range h.Buckets() {
		for range bk.Count {
			i++
			v := min(max(float64(bk.High)/div, r.Latency.Min), r.Latency.Max)
			switch i { // the ends exactly: t_min and t_max
			case 1:
				v = r.Latency.Min
			case n:
				v = r.Latency.Max
			}
			fmt.Fprintf(b, "%d, %g\n", i, v/1000)
		}
	}
	return nil
}

func divisor(r result.Result) float64 {
	if r.HistogramDivisor > 0 {
		return r.HistogramDivisor
	}
	return 1
}

// latDurAvg is a -D latency row's t_avg in ns as perftest computes it:
// the timed span over the round trips in it (DurationNS/Iterations),
// halved for SEND and WRITE (perftest's rtt_factor: 1 for READ and
// atomics), so that t_avg and tps average agree as in perftest's table.
// rdmabench's mean of its samples (Latency.Mean), which leaves out the
// pauses between its C batches, stays in the JSON.
func latDurAvg(o Options, r result.Result) float64 {
	if r.DurationNS <= 0 || r.Iterations <= 0 {
		return r.Latency.Mean
	}
	rtt := 2.0
	if o.Tool.Verb == Read || o.Tool.Verb == Atomic {
		rtt = 1
	}
	return float64(r.DurationNS) / float64(r.Iterations) / rtt
}

// tps is a duration-mode latency test's round trips per second.
func tps(r result.Result) float64 {
	if r.DurationNS <= 0 {
		return 0
	}
	return float64(r.Iterations) / (float64(r.DurationNS) / 1e9)
}

// bwFigures are a bandwidth result's average and peak in the report's unit.
// The peak is perftest's where the drop-in computed it facing perftest
// (PerftestPeak), else the best one-second interval of a duration run
// (0.00, as perftest prints without a peak, in iterations mode or with -N).
func bwFigures(o Options, r result.Result) (avg, peak float64) {
	unit := func(b result.Bandwidth) float64 {
		if o.ReportGbits {
			return b.GbitPerSec
		}
		return b.MiBPerSec
	}
	avg = unit(r.Bandwidth)
	if r.PerftestPeak != nil && !o.NoPeak {
		return avg, unit(*r.PerftestPeak)
	}
	if !o.NoPeak {
		for _, iv := range r.Intervals {
			peak = max(peak, unit(iv.Bandwidth))
		}
	}
	return avg, peak
}

// iterations is the #iterations column: all QPs' operations, or in a
// bidirectional test the side's own, as perftest counts them.
func iterations(o Options, side Side, r result.Result) int64 {
	if r.Sides != nil {
		if side == Server {
			return r.Sides.Server.Ops
		}
		return r.Sides.Client.Ops
	}
	return r.Iterations
}

// CheckLimits applies -w and -y, perftest's verifiers: an error when a
// result's average bandwidth (in the report's unit) or message rate is
// below them.
func CheckLimits(o Options, rs []result.Result) error {
	for _, r := range rs {
		avg, _ := bwFigures(o, r)
		if o.LimitBW > 0 && avg < o.LimitBW {
			return fmt.Errorf("%d B: BW average %.2f is below the -w limit %.2f", r.SizeBytes, avg, o.LimitBW)
		}
		if o.LimitMsgRate > 0 && r.Bandwidth.Mpps < o.LimitMsgRate {
			return fmt.Errorf("%d B: MsgRate %.6f Mpps is below the -y limit %.6f", r.SizeBytes, r.Bandwidth.Mpps, o.LimitMsgRate)
		}
	}
	return nil
}
