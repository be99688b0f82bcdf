package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/hist"
)

// Dashes separates blocks of the human report, as in perftest.
const Dashes = "---------------------------------------------------------------------------------------"

// WriteHeader writes the perftest-like block that describes the test
// environment of doc: device, link, MTU, GID, inline size, clock and
// connection type, with a banner for software RDMA; a TCP run has no GID
// and no inline data. Lines wider than Width wrap under their value.
func WriteHeader(w io.Writer, doc *result.Document) error {
	e := &doc.Env
	var b strings.Builder
	line := func(k, v string) {
		b.WriteString(Wrap(fmt.Sprintf(" %-15s : %s", k, v), Width, strings.Repeat(" ", 19)))
	}
	tcp := e.QPType == "TCP" || len(doc.Results) > 0 && !slices.ContainsFunc(doc.Results, func(r result.Result) bool { return r.Transport != result.TransportTCP })
	b.WriteString(Dashes + "\n")
	dev := e.Device
	if e.DeviceReason != "" {
		dev += " (" + e.DeviceReason + ")"
	}
	line("Device", dev)
	if s := doc.ServerEnv; !tcp && s != nil && s.Device != "" && (s.Host != e.Host || s.Device != e.Device || s.GID != e.GID) {
		srv := s.Device
		if h := s.HostName(); h != "" {
			srv += " on " + h
		}
		srv += fmt.Sprintf(", GID %d %s", s.GIDIndex, s.GID)
		if s.DeviceReason != "" {
			srv += " (" + s.DeviceReason + ")"
		}
		line("Server device", srv)
	}
	if e.Port > 0 {
		line("Port", strconv.Itoa(e.Port))
	}
	line("Link type", e.LinkLayer)
	mtu := e.PathMTU
	if mtu == 0 {
		mtu = e.ActiveMTU
	}
	line("Mtu", fmt.Sprintf("%d[B]", mtu))
	if !tcp { // no GID, no inline data over TCP
		gid := strconv.Itoa(e.GIDIndex)
		if e.GID != "" {
			gid += " (" + strings.TrimSpace(e.GIDType+" "+e.GID)
			if e.GIDReason != "" {
				gid += ", " + e.GIDReason
			}
			gid += ")"
		}
		line("GID index", gid)
		inline, reasons := inlineSummary(doc.Results)
		line("Max inline data", fmt.Sprintf("%s (the device grants up to %d[B])", inline, e.InlineSizeGranted))
		for _, r := range reasons {
			line("Inline", r)
		}
	}
	clock := e.ClockSource
	if e.ClockResolutionNS > 0 {
		clock += fmt.Sprintf(" (resolution %d ns)", e.ClockResolutionNS)
	}
	line("Clock", clock)
	if e.NUMA != nil {
		line("NUMA", NUMALine(e))
	}
	if s := doc.ServerEnv; s != nil && s.NUMA != nil && e.NUMA != nil && *s.NUMA != *e.NUMA {
		line("Server NUMA", NUMALine(s))
	}
	line("Connection type", e.QPType)
	if m := mrModeLine(doc.Results); m != "" {
		line("MR mode", m)
	}
	if srqUsed(doc.Results) {
		line("Receive queue", "shared (--srq): one SRQ for the server's QPs; in latency tests the client's QP has one too")
	}
	if v := verifyLine(doc.Results); v != "" {
		line("Payload check", v)
	}
	if doc.Peer != "" {
		line("Peer", doc.Peer)
	}
	if e.SoftwareRDMA {
		note := e.SoftwareRDMANote
		if note == "" {
			note = result.SoftwareRDMANote(e.Device, e.Driver, e.Netdev, false)
		}
		banner := "*** " + note + " ***"
		if len(banner) > Width { // the closing stars would wrap alone
			banner = "*** " + note
		}
		b.WriteString(Wrap(banner, Width, "    "))
	}
	b.WriteString(Dashes + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mrModeLine describes the registration modes of results for the header,
// e.g. "pool (registered once per test), huge pages"; "" when no result
// has one (TCP, older documents).
func mrModeLine(results []result.Result) string {
	var modes []string
	huge := false
	for _, r := range results {
		if r.MRMode != "" && !slices.Contains(modes, r.MRMode) {
			modes = append(modes, r.MRMode)
		}
		huge = huge || r.HugePages
	}
	for i, m := range modes {
		switch m {
		case result.MRModePool:
			modes[i] = m + " (registered once per test)"
		case result.MRModePerOp:
			modes[i] = m + " (the client registers each operation's local buffer around it; the server's stay pooled)"
		case result.MRModeODP:
			modes[i] = m + " (On-Demand Paging pools)"
		}
	}
	if len(modes) > 0 && huge {
		modes = append(modes, "huge pages")
	}
	return strings.Join(modes, ", ")
}

// srqUsed reports whether a result ran with a shared receive queue.
func srqUsed(results []result.Result) bool {
	return slices.ContainsFunc(results, func(r result.Result) bool { return r.SRQ })
}

// verifyLine sums up the --verify passes of results for the header, e.g.
// "3 tests, 192 messages, 12288 bytes checked in a pass after each measured
// run (no figure includes it)"; "" when no result was verified.
func verifyLine(results []result.Result) string {
	var tests, msgs, bytes int64
	for _, r := range results {
		if v := r.Verify; v != nil {
			tests++
			msgs += v.Messages
			bytes += v.Bytes
		}
	}
	if tests == 0 {
		return ""
	}
	plural := "s"
	if tests == 1 {
		plural = ""
	}
	return fmt.Sprintf("--verify: %d test%s, %d messages, %d bytes checked in a pass after each measured run (no figure includes it)", tests, plural, msgs, bytes)
}

// perOpBWNote is printed under a bandwidth table with per-op results.
const perOpBWNote = "per-op: bandwidth and comp_* include the client's ibv_reg_mr before each post and ibv_dereg_mr once each work request is complete"

// FormatUS formats a latency in ns as µs with 2 decimals (perftest's
// resolution), or "n/a" when it is absent. Nanos.US does the same for
// fractional ns.
func FormatUS(v hist.Value) string { return v.Format(1000, 2) }

func US(ns float64) string { return strconv.FormatFloat(ns/1000, 'f', 2, 64) }

// LatencyNA reports the n/a rule under a table that printed n/a (one
// line; Note wraps it).
var LatencyNA = "n/a: too few samples for the percentile's " + strconv.Itoa(int(hist.DefaultConfidence*100)) + " % confidence interval (" +
	hist.NARule([]float64{50, 90, 99, 99.9, 99.99}, hist.DefaultConfidence) + ")"

// dropTurn is when percentile p's column gives way to the width (Fit):
// p50 and p99 never, p90 first, then the others from the highest.
func dropTurn(p float64) int {
	switch p {
	case 50, 99:
		return 0
	case 90:
		return 3
	}
	return 4
}

// latencyColumn is one column of the latency table: its head, how it
// gives way, its cell for a result and, for a percentile, the percent.
type latencyColumn struct {
	Column
	pct  float64
	cell func(r *result.Result) string
}

// WriteLatencyTable writes results as a latency table in µs: op, size,
// iterations, then min, the reported percentiles in ascending order (by
// default p50, p90, p99, p99.9, p99.99; --percentiles), max, mean and
// standard deviation. p50 is the median (perftest's t_typical), max the
// true maximum, the percentiles those of the HDR histogram. Within width
// columns (0: no limit, --wide) it leaves out a percentile that is n/a in
// every row (too few samples) and, if still too wide, stdev, mean, p90
// and the highest percentiles, in that order, and says so under the
// table. After it, one line per op states what the latencies time.
func WriteLatencyTable(w io.Writer, results []result.Result, width int) error {
	plain := func(f func(l *result.Latency) float64) func(r *result.Result) string {
		return func(r *result.Result) string {
			if r.Latency.Count == 0 {
				return "n/a"
			}
			return US(f(&r.Latency))
		}
	}
	cols := []latencyColumn{
		{Column: Column{Head: "op", Left: true}, cell: func(r *result.Result) string { return r.Op }},
		{Column: Column{Head: "#bytes"}, cell: func(r *result.Result) string { return strconv.Itoa(r.SizeBytes) }},
		{Column: Column{Head: "#iterations"}, cell: func(r *result.Result) string { return strconv.FormatInt(r.Iterations, 10) }},
		{Column: Column{Head: "min[usec]"}, cell: plain(func(l *result.Latency) float64 { return l.Min })},
	}
	for _, p := range tablePercentiles(results) {
		cols = append(cols, latencyColumn{Column: Column{Head: result.PercentileLabel(p) + "[usec]", Drop: dropTurn(p)}, pct: p,
			cell: func(r *result.Result) string { return PercentileOf(&r.Latency, p).Value.US() }})
	}
	cols = append(cols,
		latencyColumn{Column: Column{Head: "max[usec]"}, cell: plain(func(l *result.Latency) float64 { return l.Max })},
		latencyColumn{Column: Column{Head: "mean[usec]", Drop: 2}, cell: plain(func(l *result.Latency) float64 { return l.Mean })},
		latencyColumn{Column: Column{Head: "stdev[usec]", Drop: 1}, cell: plain(func(l *result.Latency) float64 { return l.Stdev })})
	var t Table
	for _, c := range cols {
		t = append(t, c.Column)
	}
	rows := make([][]string, len(results))
	for i := range results {
		for _, c := range cols {
			rows[i] = append(rows[i], c.cell(&results[i]))
		}
	}
	var b strings.Builder
	_, na := writeFitted(&b, t, rows, width, func(i int) bool {
		return cols[i].pct > 0 && !slices.ContainsFunc(results, func(r result.Result) bool { return PercentileOf(&r.Latency, cols[i].pct).Value.OK })
	}, "n/a in every test: too few samples")
	seen := map[string]bool{}
	for _, r := range results {
		key := r.Op + "\x00" + r.TimedInterval
		if seen[key] || r.TimedInterval == "" {
			continue
		}
		seen[key] = true
		line := fmt.Sprintf("%s: each latency is %s", r.Op, r.TimedInterval)
		if r.RTT != nil {
			line += "; rtt_ns in JSON has the full round trip"
		}
		b.WriteString(Note(line))
	}
	if na {
		b.WriteString(Note(LatencyNA))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFitted writes the table t of rows within width columns (0: every
// column): the columns unfilled says have no value in any row are left
// out (named under the table with why, unless why is ""), then columns
// give way by their Drop turn; a note names what is not shown. It returns
// the columns shown and whether a cell shown is n/a.
func writeFitted(b *strings.Builder, t Table, rows [][]string, width int, unfilled func(i int) bool, why string) (shown Table, na bool) {
	var empty []string
	if width > 0 {
		all := t
		t, rows = all.Keep(rows, func(i int) bool {
			if unfilled(i) && why != "" {
				empty = append(empty, columnName(all[i].Head))
			}
			return !unfilled(i)
		})
	}
	t, rows, narrow := t.Fit(rows, width)
	t.Write(b, rows)
	var parts []string
	if len(empty) > 0 {
		parts = append(parts, strings.Join(empty, ", ")+" ("+why+")")
	}
	if len(narrow) > 0 {
		for i := range narrow {
			narrow[i] = columnName(narrow[i])
		}
		parts = append(parts, strings.Join(narrow, ", ")+fmt.Sprintf(" (to fit %d columns)", width))
	}
	if len(parts) > 0 {
		b.WriteString(Note("not shown: " + strings.Join(parts, "; ") + "; --wide shows every column"))
	}
	return t, slices.ContainsFunc(rows, func(r []string) bool { return slices.Contains(r, "n/a") })
}

// columnName is a column's head without its unit: "p99.99" for
// "p99.99[usec]", "p50" for "p50 [CI][usec]".
func columnName(head string) string {
	name, _, _ := strings.Cut(head, "[")
	return strings.TrimSpace(name)
}

// WriteBandwidthTable writes results as perftest's bandwidth table with an
// op column first, the average bandwidth in unit (UnitMiB, UnitMB or UnitGb)
// and, instead of perftest's BW peak, the completion latency (post to
// completion of signaled work requests) p50 and p99 in µs, then CPU per
// message and link utilisation where measured. A bidirectional result's
// row (op "write bidir") has the sums over both sides. Within width
// columns (0: no limit, --wide) the CPU and link columns are left out
// where no result has them, and give way to the width, link first.
func WriteBandwidthTable(w io.Writer, results []result.Result, unit string, width int) error {
	return WriteBandwidthTableSides(w, results, unit, false, width)
}

// WriteBandwidthTableSides is WriteBandwidthTable; with sides, each
// bidirectional result's row is followed by one row per side (its own
// operations, bandwidth and message rate, perftest's --report-both), and the
// table ends with a bytes column: the bytes each row moved.
func WriteBandwidthTableSides(w io.Writer, results []result.Result, unit string, sides bool, width int) error {
	_, label, err := result.Bandwidth{}.In(unit)
	if err != nil {
		return err
	}
	t := Table{
		{Head: "op", Left: true}, {Head: "#bytes"}, {Head: "#iterations"},
		{Head: "BW average[" + label + "]"}, {Head: "MsgRate[Mpps]"},
		{Head: "comp_p50[usec]"}, {Head: "comp_p99[usec]"},
		{Head: cpuHead, Drop: 2}, {Head: "link[%]", Drop: 1},
	}
	const cpuCol, linkCol = 7, 8
	sides = sides && slices.ContainsFunc(results, func(r result.Result) bool { return r.Sides != nil })
	if sides {
		t = append(t, Column{Head: "bytes"})
	}
	var rows [][]string
	perOp, bidir := false, false
	for _, r := range results {
		bw, _, _ := r.Bandwidth.In(unit)
		op := r.Op
		if r.QPs > 1 {
			op += fmt.Sprintf(" x%d", r.QPs) // aggregate over QPs
		}
		if r.Bidirectional {
			op += " bidir" // sum over both sides
		}
		row := []string{op, strconv.Itoa(r.SizeBytes), strconv.FormatInt(r.Iterations, 10),
			strconv.FormatFloat(bw, 'f', 2, 64), strconv.FormatFloat(r.Bandwidth.Mpps, 'f', 6, 64),
			r.Latency.P50.US(), r.Latency.P99.US(), cpuPerMsg(r.CPU), linkPercent(r.LinkUtilization)}
		if sides {
			row = append(row, strconv.FormatInt(r.Iterations*int64(r.SizeBytes), 10))
		}
		perOp = perOp || r.MRMode == result.MRModePerOp
		bidir = bidir || r.Bidirectional
		rows = append(rows, row)
		if sides && r.Sides != nil {
			for _, sd := range []struct {
				name string
				s    result.SideResult
			}{{"  client", r.Sides.Client}, {"  server", r.Sides.Server}} {
				bw, _, _ := sd.s.Bandwidth.In(unit)
				rows = append(rows, []string{sd.name, strconv.Itoa(r.SizeBytes), strconv.FormatInt(sd.s.Ops, 10),
					strconv.FormatFloat(bw, 'f', 2, 64), strconv.FormatFloat(sd.s.Bandwidth.Mpps, 'f', 6, 64),
					"-", "-", "-", "-", strconv.FormatInt(sd.s.Bytes, 10)})
			}
		}
	}
	var b strings.Builder
	shown, na := writeFitted(&b, t, rows, width, func(i int) bool {
		return (i == cpuCol || i == linkCol) && !slices.ContainsFunc(rows, func(r []string) bool { return r[i] != "-" })
	}, "")
	if slices.ContainsFunc(shown, func(c Column) bool { return c.Head == cpuHead }) {
		b.WriteString(Note(cpuNote))
	}
	if bidir {
		b.WriteString(Note(bidirNote))
		if sides {
			b.WriteString(Note(bidirSidesNote))
		}
	}
	if perOp {
		b.WriteString(Note(perOpBWNote))
	}
	for _, r := range results {
		if r.RateLimit != nil && r.RateLimit.AppliesTo == "measured" {
			b.WriteString(Note(fmt.Sprintf("%s %s %s: the client's sending was paced at %.0f messages/s in the C loop (--limit-bw, --limit-msgrate)",
				r.Op, r.Mode, result.SizeName(r.SizeBytes), r.RateLimit.MsgsPerSec)))
		}
	}
	if na {
		b.WriteString(Note(LatencyNA))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// cpuHead heads the bandwidth table's CPU column, and cpuNote explains it.
const (
	cpuHead = "CPU[usec/msg]"
	cpuNote = "CPU: user + system time of each side's engine thread per message, client/server (a passive server, whose NIC serves WRITE or READ, shows 0)"
)

// bidirNote is printed under a bandwidth table with bidirectional results.
const bidirNote = "bidir: both sides posted at once (-b); BW average and MsgRate are the sums of both sides' rates, " +
	"#iterations both sides' operations (perftest -b); comp_* are the client's completions"

// bidirSidesNote is printed under the per-side rows (--report-both).
const bidirSidesNote = "client, server: each side's own operations, over its own span from the common start (perftest --report-both)"

// WriteConnectionTable writes how each RDMA test's QPs were connected and
// their setup times in ms (per QP: p50 and max; see ConnSetup), after a
// line that says what the setup time covers. Results without a connection
// (TCP, older documents) are left out; with none, it writes nothing.
func WriteConnectionTable(w io.Writer, results []result.Result) error {
	t := Table{
		{Head: "op", Left: true}, {Head: "mode", Left: true}, {Head: "#bytes"}, {Head: "connection", Left: true},
		{Head: "#qps"}, {Head: "setup_p50[msec]"}, {Head: "setup_max[msec]"}, {Head: "device", Left: true}, {Head: "rdma_cm address", Left: true},
	}
	var rows [][]string
	na := false
	for _, r := range results {
		c := r.Connection
		if c == nil {
			continue
		}
		addr := c.Address
		if addr == "" {
			addr = "-"
		}
		rows = append(rows, []string{r.Op, r.Mode, strconv.Itoa(r.SizeBytes), c.Method, strconv.Itoa(c.QPs),
			c.P50NS.Format(1e6, 2), strconv.FormatFloat(float64(c.MaxNS)/1e6, 'f', 2, 64), c.Device, addr})
		na = na || !c.P50NS.OK
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(Note(connSetupNote))
	t.Write(&b, rows)
	if na {
		b.WriteString("n/a: a setup p50 needs at least 2 QPs\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// connSetupNote says what a connection setup time covers.
const connSetupNote = "connection setup per QP, on the client: rdma_cm from rdma_create_id through address and route resolution, " +
	"rdma_create_qp and rdma_connect to ESTABLISHED; exchange from ibv_create_qp through the QP-number exchange to RTS"

// cpuPerMsg formats client/server CPU microseconds per message.
func cpuPerMsg(c *result.CPUUsage) string {
	if c == nil {
		return "-"
	}
	return strconv.FormatFloat(c.ClientUSPerMsg, 'f', 2, 64) + "/" + strconv.FormatFloat(c.ServerUSPerMsg, 'f', 2, 64)
}

// linkPercent formats a link utilisation (0..1) as a percentage.
func linkPercent(u float64) string {
	if u <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*u, 'f', 1, 64)
}

// WriteIntervalLine writes one line for a duration-mode interval, such as
// "[  1.00-  2.00 s]     1234.56 MiB/sec   0.123456 Mpps  p50     4.10 usec  p99     9.87 usec",
// with the bandwidth in unit (UnitMiB, UnitMB or UnitGb).
func WriteIntervalLine(w io.Writer, iv result.Interval, unit string) error {
	bw, label, err := iv.Bandwidth.In(unit)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "[%6.2f-%6.2f s]  %10.2f %s  %9.6f Mpps  p50 %8s usec  p99 %8s usec\n",
		float64(iv.StartNS)/1e9, float64(iv.EndNS)/1e9, bw, label, iv.Bandwidth.Mpps,
		iv.P50.US(), iv.P99.US())
	return err
}

// SizeLabel writes a byte count the way --size takes it: 4K, 64K, 1M, 1G,
// or plain bytes when no binary unit divides it.
func SizeLabel(b int64) string {
	for _, u := range []struct {
		n   int64
		suf string
	}{{1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.suf
		}
	}
	return strconv.FormatInt(b, 10)
}

// inlineSummary describes the inline sizes of results for the header: one
// size when every RDMA test used the same, else one per op and mode, such as
// "236[B] send lat, 220[B] write lat, 0[B] bw"; and the distinct reasons.
func inlineSummary(results []result.Result) (string, []string) {
	type entry struct {
		label string
		n     int
	}
	var es []entry
	var reasons []string
	for _, r := range results {
		if r.Transport == result.TransportTCP {
			continue
		}
		label := r.Op + " " + r.Mode
		if r.Mode == result.ModeBW && r.Inline == 0 {
			label = "bw"
		}
		if !slices.ContainsFunc(es, func(e entry) bool { return e.label == label }) {
			es = append(es, entry{label, r.Inline})
		}
		if r.InlineReason != "" && !slices.Contains(reasons, r.InlineReason) {
			reasons = append(reasons, r.InlineReason)
		}
	}
	if len(es) == 0 {
		return "0[B]", nil
	}
	same := !slices.ContainsFunc(es, func(e entry) bool { return e.n != es[0].n })
	if same {
		return fmt.Sprintf("%d[B]", es[0].n), reasons
	}
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("%d[B] %s", e.n, e.label))
	}
	return strings.Join(parts, ", "), reasons
}
