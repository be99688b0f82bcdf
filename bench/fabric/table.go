package fabric

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Marks of cells without a value.
const (
	markNA      = "n/a" // a percentile too few samples back
	markUnknown = "?"   // not measured (CPU), or the link rate is unknown
	markMissing = "-"   // the fabric has no such test
)

// metric is one line of a row.
type metric struct {
	mode  string
	head  func(unit string) string
	value func(r *result.Result, unit string) (float64, bool)
	text  func(v float64) string
	na    string // the cell when value is not ok
	ratio bool   // shows its ratio to the TCP baseline
}

func percentile(name string, p func(l *result.Latency) result.Nanos) metric {
	return metric{mode: result.ModeLat, head: func(string) string { return name + "[usec]" },
		value: func(r *result.Result, _ string) (float64, bool) { n := p(&r.Latency); return n.NS, n.OK },
		text:  report.US, na: markNA, ratio: true}
}

func fixed(prec int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', prec, 64) }
}

var cpuMetric = metric{head: func(string) string { return "CPU[usec/msg]" },
	value: func(r *result.Result, _ string) (float64, bool) {
		if r.CPU == nil {
			return 0, false
		}
		return r.CPU.ClientUSPerMsg, true
	}, text: fixed(2), na: markUnknown}

// metrics lists the lines of the rows of each mode.
var metrics = []metric{
	percentile("p50", func(l *result.Latency) result.Nanos { return l.P50 }),
	percentile("p99", func(l *result.Latency) result.Nanos { return l.P99 }),
	percentile("p99.9", func(l *result.Latency) result.Nanos { return l.P99_9 }),
	{mode: result.ModeBW, head: func(unit string) string { _, l, _ := result.Bandwidth{}.In(unit); return "BW[" + l + "]" },
		value: func(r *result.Result, unit string) (float64, bool) {
			v, _, err := r.Bandwidth.In(unit)
			return v, err == nil
		},
		text: fixed(2), ratio: true},
	{mode: result.ModeBW, head: func(string) string { return "MsgRate[Mpps]" },
		value: func(r *result.Result, _ string) (float64, bool) { return r.Bandwidth.Mpps, true }, text: fixed(6)},
	withMode(cpuMetric, result.ModeLat),
	withMode(cpuMetric, result.ModeBW),
	{mode: result.ModeBW, head: func(string) string { return "link[%]" },
		value: func(r *result.Result, _ string) (float64, bool) {
			return 100 * r.LinkUtilization, r.LinkUtilization > 0
		},
		text: fixed(1), na: markUnknown},
}

func withMode(m metric, mode string) metric { m.mode = mode; return m }

// line is one line of the table: a row's metric across the fabrics.
type line struct {
	test  string // the row's name on its first line, else ""
	head  string
	cells []string
	marks string // the row's flag marks, on its first line
}

// used records which marks and notes a table needs.
type used struct {
	ratio, send, na, unknown, missing, link bool
}

func (rep *Report) lines(unit string) ([]line, used) {
	var out []line
	var u used
	for ri := range rep.Rows {
		row := &rep.Rows[ri]
		first := true
		for _, m := range metrics {
			if m.mode != row.Mode {
				continue
			}
			l := line{head: m.head(unit)}
			if first {
				l.test, l.marks, first = row.Name(), row.Marks(), false
			}
			u.link = u.link || strings.HasPrefix(l.head, "link")
			base, baseOK := 0.0, false
			if row.Baseline != nil {
				base, baseOK = m.value(row.Baseline, unit)
			}
			for i, c := range row.Cells {
				if c.Result == nil {
					l.cells = append(l.cells, markMissing)
					u.missing = true
					continue
				}
				v, ok := m.value(c.Result, unit)
				if !ok {
					l.cells = append(l.cells, m.na)
					u.na, u.unknown = u.na || m.na == markNA, u.unknown || m.na == markUnknown
					continue
				}
				s := m.text(v)
				switch {
				case c.Send:
					s += " (send)"
					u.send = true
				case m.ratio && i != rep.Base && baseOK && base != 0:
					s += " (" + strconv.FormatFloat(v/base, 'f', 2, 64) + "x)"
					u.ratio = true
				}
				l.cells = append(l.cells, s)
			}
			out = append(out, l)
		}
	}
	return out, u
}

// notes returns the lines that explain a table.
func (rep *Report) notes(u used) []string {
	var out []string
	if rep.Base >= 0 {
		if u.ratio {
			out = append(out, fmt.Sprintf("(N.NNx): value / the value of the TCP baseline, %s, of the same mode and size; latency: above 1 is slower than TCP, BW: above 1 is faster",
				rep.Fabrics[rep.Base].Label))
		}
		if u.send {
			out = append(out, "TCP has only SEND: the SEND, WRITE and READ rows of a mode and size all take TCP's SEND of that mode and size as baseline, shown in the TCP column marked (send)")
		}
	} else {
		out = append(out, "no TCP run among the files (rdmabench loopback --transport tcp --json FILE): no ratios")
	}
	out = append(out, "latency: as in latency_ns, RTT/2 for SEND and WRITE (and TCP), RTT for READ; CPU: the client's engine thread, user + system time per message")
	if u.link {
		out = append(out, "link: bandwidth over the port's nominal rate")
	}
	if u.na {
		out = append(out, report.LatencyNA)
	}
	if u.unknown {
		out = append(out, "?: not measured (CPU), or the port's rate is unknown (link)")
	}
	if u.missing {
		out = append(out, "-: the fabric has no such test")
	}
	var sw []string
	for _, f := range rep.Fabrics {
		if software(&f) {
			sw = append(sw, f.Label)
		}
	}
	if len(sw) > 0 {
		out = append(out, "software RDMA ("+strings.Join(sw, ", ")+"): "+result.SoftwareCaveat)
	}
	return out
}

func software(f *Fabric) bool {
	for _, d := range f.Docs {
		if d.Env.SoftwareRDMA {
			return true
		}
	}
	return false
}

// describe summarises f's link for the fabric list, such as
// "Ethernet over dummy0, MTU 4096, 2.5 Gbps, software RDMA, host vm".
func describe(f *Fabric) string {
	e := &f.Docs[0].Env
	var parts []string
	link := e.LinkLayer
	if e.Netdev != "" {
		link = strings.TrimSpace(link + " over " + e.Netdev)
	}
	if link != "" {
		parts = append(parts, link)
	}
	if e.PathMTU > 0 {
		parts = append(parts, "MTU "+strconv.Itoa(e.PathMTU))
	} else if e.ActiveMTU > 0 {
		parts = append(parts, "MTU "+strconv.Itoa(e.ActiveMTU))
	}
	if e.LinkSpeed != "" {
		parts = append(parts, e.LinkSpeed)
	}
	if software(f) {
		parts = append(parts, "software RDMA ("+result.SoftwareKind(e.Device, e.Driver)+")")
	}
	if h := e.HostName(); h != "" {
		parts = append(parts, "host "+h)
	}
	return strings.Join(parts, ", ")
}

func checkUnit(unit string) error {
	_, _, err := result.Bandwidth{}.In(unit)
	return err
}

// flagLines returns, per mark in use, its title and one detail line per
// flagged row, such as "read lat 2B: RTT: RoCE rxe1 (rdma_rxe); RTT/2: TCP lo (send)".
func (rep *Report) flagLines() (marks, titles []string, details [][]string) {
	for _, c := range checks {
		var d []string
		for ri := range rep.Rows {
			for _, f := range rep.Rows[ri].Flags {
				if f.Mark == c.mark {
					d = append(d, rep.Rows[ri].Name()+": "+f.Detail())
				}
			}
		}
		if len(d) > 0 {
			marks, titles, details = append(marks, c.mark), append(titles, c.title), append(details, d)
		}
	}
	return marks, titles, details
}

// WriteText writes rep as aligned text tables in perftest's style: the
// fabrics and their links, then one column per fabric and, per row (op,
// mode, size), one line per figure: p50, p99, p99.9 and CPU per message for
// latency rows; bandwidth in unit (UnitMiB, UnitMB or UnitGb), message
// rate, CPU per message and link utilisation for bandwidth rows. Latency
// and bandwidth show their ratio to the TCP baseline. A last column holds
// the row's flag marks, explained after the notes. A table wider than
// width columns (0: no limit, --wide) is split into tables of as many
// fabrics as fit, each with the test and metric columns; the notes wrap at
// report.Width.
func (rep *Report) WriteText(w io.Writer, unit string, width int) error {
	if err := checkUnit(unit); err != nil {
		return err
	}
	var b strings.Builder
	var fl [][]string
	for i := range rep.Fabrics {
		fl = append(fl, []string{rep.Fabrics[i].Label, describe(&rep.Fabrics[i])})
	}
	report.Table{{Head: "fabric", Left: true}, {Head: "link", Left: true}}.Write(&b, fl) // as wide as the names
	b.WriteString("\n")
	t := report.Table{{Head: "test", Left: true}, {Head: "metric", Left: true}}
	for _, f := range rep.Fabrics {
		t = append(t, report.Column{Head: f.Label})
	}
	t = append(t, report.Column{Head: "flags", Left: true})
	lines, u := rep.lines(unit)
	var rows [][]string
	for _, l := range lines {
		rows = append(rows, append(append([]string{l.test, l.head}, l.cells...), l.marks))
	}
	t.WriteSplit(&b, rows, width, 2)
	for _, n := range rep.notes(u) {
		b.WriteString(report.Note(n))
	}
	if marks, titles, details := rep.flagLines(); len(marks) > 0 {
		b.WriteString(report.Note("flags: the row's results differ in a setting, so its ratios compare unlike tests"))
		for i, m := range marks {
			b.WriteString(report.Wrap(fmt.Sprintf(" %s  %s", m, titles[i]), report.Width, "    "))
			for _, d := range details[i] {
				b.WriteString(report.Wrap("      "+d, report.Width, "        "))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes rep as GitHub Markdown: a table of the fabrics, a
// table with the lines of WriteText (test names in bold, flag marks in the
// last column), and the notes and flags as lists.
func (rep *Report) WriteMarkdown(w io.Writer, unit string) error {
	if err := checkUnit(unit); err != nil {
		return err
	}
	var b strings.Builder
	row := func(cells ...string) {
		b.WriteString("|")
		for _, s := range cells {
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	row("fabric", "link")
	row("---", "---")
	for i := range rep.Fabrics {
		row(mdEscape(rep.Fabrics[i].Label), mdEscape(describe(&rep.Fabrics[i])))
	}
	b.WriteString("\n")
	head, align := []string{"test", "metric"}, []string{"---", "---"}
	for _, f := range rep.Fabrics {
		head, align = append(head, mdEscape(f.Label)), append(align, "---:")
	}
	row(append(head, "flags")...)
	row(append(align, "---")...)
	lines, u := rep.lines(unit)
	for _, l := range lines {
		cells := []string{"", mdEscape(l.head)}
		if l.test != "" {
			cells[0] = "**" + mdEscape(l.test) + "**"
		}
		for _, c := range l.cells {
			cells = append(cells, mdEscape(c))
		}
		row(append(cells, l.marks)...)
	}
	b.WriteString("\n")
	for _, n := range rep.notes(u) {
		b.WriteString("- " + mdEscape(n) + "\n")
	}
	if marks, titles, details := rep.flagLines(); len(marks) > 0 {
		b.WriteString("\nFlags: the row's results differ in a setting, so its ratios compare unlike tests.\n\n")
		for i, m := range marks {
			fmt.Fprintf(&b, "- **%s**: %s\n", m, mdEscape(titles[i]))
			for _, d := range details[i] {
				b.WriteString("  - " + mdEscape(d) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape escapes the characters that would end a Markdown table cell or
// start emphasis.
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `|`, `\|`, `*`, `\*`).Replace(s)
}
