package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Metric names accepted by ParseMetrics and ParseMaxRegress. Latency metrics
// are in ns in JSON: the sample latency of lat tests, the completion latency
// of bw tests. MetricBW and MetricMpps apply to bw tests only.
const (
	MetricP50    = "p50"
	MetricP90    = "p90"
	MetricP99    = "p99"
	MetricP99_9  = "p99_9"
	MetricP99_99 = "p99_99"
	MetricMean   = "mean"
	MetricMax    = "max"
	MetricBW     = "bw"   // bandwidth (MB/s in JSON; shown in the chosen unit)
	MetricMpps   = "mpps" // message rate, 10^6 messages/s
)

// Default table metrics, used when no metrics are given.
var (
	DefaultLatMetrics = []string{MetricP50, MetricP99, MetricP99_9, MetricMax}
	DefaultBWMetrics  = []string{MetricBW, MetricP50, MetricP99}
)

// metricDef describes one metric.
type metricDef struct {
	key  string // canonical name, e.g. "p99_9"
	name string // display name, e.g. "p99.9"
	rate bool   // bandwidth or message rate: higher is better, bw tests only
}

// metricDefs lists the metrics in their canonical order.
var metricDefs = []metricDef{
	{key: MetricP50, name: "p50"},
	{key: MetricP90, name: "p90"},
	{key: MetricP99, name: "p99"},
	{key: MetricP99_9, name: "p99.9"},
	{key: MetricP99_99, name: "p99.99"},
	{key: MetricMean, name: "mean"},
	{key: MetricMax, name: "max"},
	{key: MetricBW, name: "bw", rate: true},
	{key: MetricMpps, name: "mpps", rate: true},
}

// metricKeys returns the canonical metric names, comma-separated.
func metricKeys() string {
	var keys []string
	for _, m := range metricDefs {
		keys = append(keys, m.key)
	}
	return strings.Join(keys, ", ")
}

// lookupMetric finds a metric by canonical name or alias ("p99.9", "p99.99").
func lookupMetric(s string) (metricDef, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, m := range metricDefs {
		if s == m.key || s == m.name {
			return m, true
		}
	}
	return metricDef{}, false
}

func metricByKey(key string) metricDef {
	m, _ := lookupMetric(key)
	return m
}

// appliesTo reports whether m is defined for a test of mode: latency metrics
// are defined in both modes, rates in bw mode only.
func (m metricDef) appliesTo(mode string) bool { return !m.rate || mode == result.ModeBW }

// value returns m of r in its JSON unit (ns, MB/s or Mpps) and whether it is
// backed: an n/a percentile, or a latency of an empty histogram, is not.
func (m metricDef) value(r *result.Result) (float64, bool) {
	l := &r.Latency
	switch m.key {
	case MetricP50:
		return l.P50.NS, l.P50.OK
	case MetricP90:
		return l.P90.NS, l.P90.OK
	case MetricP99:
		return l.P99.NS, l.P99.OK
	case MetricP99_9:
		return l.P99_9.NS, l.P99_9.OK
	case MetricP99_99:
		return l.P99_99.NS, l.P99_99.OK
	case MetricMean:
		return l.Mean, l.Count > 0
	case MetricMax:
		return l.Max, l.Count > 0
	case MetricBW:
		return r.Bandwidth.MBPerSec, true
	case MetricMpps:
		return r.Bandwidth.Mpps, true
	}
	return 0, false
}

// format formats v, in m's JSON unit, for display: latency in µs with 2
// decimals, bandwidth in unit with 2 decimals, message rate with 6.
func (m metricDef) format(v float64, unit string) string {
	switch m.key {
	case MetricBW:
		bw, _, _ := bandwidthOfMB(v).In(unit)
		return strconv.FormatFloat(bw, 'f', 2, 64)
	case MetricMpps:
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	return report.US(v)
}

// unitLabel is the unit m is displayed in, as in "41.20 us".
func (m metricDef) unitLabel(unit string) string {
	switch m.key {
	case MetricBW:
		_, label, _ := result.Bandwidth{}.In(unit)
		return label
	case MetricMpps:
		return "Mpps"
	}
	return "us"
}

// rowLabel is the table's metric column for m in a test of mode, in the
// style of the report tables: "p99[usec]", "comp_p99[usec]", "BW[MiB/sec]".
func (m metricDef) rowLabel(mode, unit string) string {
	switch m.key {
	case MetricBW:
		_, label, _ := result.Bandwidth{}.In(unit)
		return "BW[" + label + "]"
	case MetricMpps:
		return "MsgRate[Mpps]"
	}
	if mode == result.ModeBW {
		return "comp_" + m.name + "[usec]"
	}
	return m.name + "[usec]"
}

// bandwidthOfMB returns the bandwidth of mb 10^6 bytes/s in every unit.
func bandwidthOfMB(mb float64) result.Bandwidth {
	return result.Bandwidth{MBPerSec: mb, MiBPerSec: mb * 1e6 / (1 << 20), GbitPerSec: mb * 8 / 1e3}
}

// ParseMetrics parses a comma-separated list of metric names (p50, p90, p99,
// p99_9 or p99.9, p99_99 or p99.99, mean, max, bw, mpps) into canonical
// names, in the given order without duplicates. An empty string gives nil:
// the defaults, DefaultLatMetrics and DefaultBWMetrics.
func ParseMetrics(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		m, ok := lookupMetric(part)
		if !ok {
			return nil, fmt.Errorf("metric %q unknown; valid: %s", strings.TrimSpace(part), metricKeys())
		}
		if !slices.Contains(out, m.key) {
			out = append(out, m.key)
		}
	}
	return out, nil
}

// ParseMaxRegress parses regression limits such as "p99=10%,bw=5%" into a
// map from canonical metric name to the limit as a fraction (0.10, 0.05).
// Every entry needs a known metric, a non-negative number and a % sign; a
// metric may appear once. The error names the bad entry.
func ParseMaxRegress(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("max-regress is empty; want METRIC=PERCENT%,..., e.g. p99=10%,bw=5%")
	}
	limits := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		entry := strings.TrimSpace(part)
		k, v, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("max-regress entry %q: want METRIC=PERCENT%%, e.g. p99=10%%", entry)
		}
		m, ok := lookupMetric(k)
		if !ok {
			return nil, fmt.Errorf("max-regress entry %q: metric %q unknown; valid: %s", entry, strings.TrimSpace(k), metricKeys())
		}
		if _, dup := limits[m.key]; dup {
			return nil, fmt.Errorf("max-regress entry %q: metric %s given twice", entry, m.key)
		}
		v = strings.TrimSpace(v)
		num, pct := strings.CutSuffix(v, "%")
		if !pct {
			return nil, fmt.Errorf("max-regress entry %q: limit %q needs a %% sign, e.g. %s=10%%", entry, v, m.key)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("max-regress entry %q: limit %q is not a non-negative percentage", entry, v)
		}
		if m.rate && f >= 100 {
			return nil, fmt.Errorf("max-regress entry %q: a %s limit must be below 100%%", entry, m.key)
		}
		limits[m.key] = f / 100
	}
	return limits, nil
}

// Run is one run (one result document) of a comparison.
type Run struct {
	Name  string // as given to Compare, e.g. the file's base name
	Label string // column heading: Name, plus the device when the runs differ in device
	Doc   *result.Document
}

// Test is one test and its result in each run.
type Test struct {
	Key     result.Key
	Results []*result.Result // one per run, nil where the run lacks the test
}

// Comparison lines up the tests of several runs. The first run is the
// reference of the ratios.
type Comparison struct {
	Runs  []Run
	Tests []Test // every test of any run, in order of first appearance
}

// Compare matches the results of docs by test (op, mode, size and transport)
// and names the runs by names (one per document). Where a document holds a
// test twice, the first result counts.
func Compare(docs []*result.Document, names []string) *Comparison {
	c := &Comparison{}
	devices := map[string]bool{}
	for _, d := range docs {
		devices[d.Env.Device] = true
	}
	for i, d := range docs {
		name := fmt.Sprintf("run%d", i+1)
		if i < len(names) && names[i] != "" {
			name = names[i]
		}
		label := name
		if len(devices) > 1 && d.Env.Device != "" {
			label += " (" + d.Env.Device + ")"
		}
		c.Runs = append(c.Runs, Run{Name: name, Label: label, Doc: d})
	}
	index := map[result.Key]int{}
	for i, d := range docs {
		for j := range d.Results {
			r := &d.Results[j]
			k := result.KeyOf(r)
			ti, ok := index[k]
			if !ok {
				ti = len(c.Tests)
				index[k] = ti
				c.Tests = append(c.Tests, Test{Key: k, Results: make([]*result.Result, len(docs))})
			}
			if c.Tests[ti].Results[i] == nil {
				c.Tests[ti].Results[i] = r
			}
		}
	}
	return c
}

// compareCell is one value cell of a comparison table.
type compareCell struct {
	text  string // "12.34", "12.34 (1.05x)", "n/a" or "-"
	na    bool
	miss  bool
	ratio bool
}

// compareRow is one test × metric row.
type compareRow struct {
	test   string // the test name on a group's first row, else ""
	metric string
	cells  []compareCell
	comp   bool // a completion latency row of a bw test
}

// metricsFor returns the metrics shown for a test of mode.
func metricsFor(metrics []string, mode string) []metricDef {
	if len(metrics) == 0 {
		metrics = DefaultLatMetrics
		if mode == result.ModeBW {
			metrics = DefaultBWMetrics
		}
	}
	var out []metricDef
	for _, k := range metrics {
		if m, ok := lookupMetric(k); ok && m.appliesTo(mode) {
			out = append(out, m)
		}
	}
	return out
}

func (c *Comparison) rows(metrics []string, unit string) []compareRow {
	var rows []compareRow
	for _, t := range c.Tests {
		name := t.Key.String()
		for _, m := range metricsFor(metrics, t.Key.Mode) {
			row := compareRow{test: name, metric: m.rowLabel(t.Key.Mode, unit), comp: t.Key.Mode == result.ModeBW && !m.rate}
			name = ""
			var ref float64
			refOK := false
			for i, r := range t.Results {
				if r == nil {
					row.cells = append(row.cells, compareCell{text: "-", miss: true})
					continue
				}
				v, ok := m.value(r)
				if !ok {
					row.cells = append(row.cells, compareCell{text: "n/a", na: true})
					continue
				}
				cell := compareCell{text: m.format(v, unit)}
				if i == 0 {
					ref, refOK = v, true
				} else if refOK && ref != 0 {
					cell.text += " (" + strconv.FormatFloat(v/ref, 'f', 2, 64) + "x)"
					cell.ratio = true
				}
				row.cells = append(row.cells, cell)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// notes returns the lines that explain a table of rows.
func (c *Comparison) notes(rows []compareRow) []string {
	var na, miss, ratio, comp bool
	for _, r := range rows {
		comp = comp || r.comp
		for _, cl := range r.cells {
			na, miss, ratio = na || cl.na, miss || cl.miss, ratio || cl.ratio
		}
	}
	var out []string
	if ratio {
		out = append(out, fmt.Sprintf("(N.NNx): value / the value of %s; latency: above 1 is slower, BW and MsgRate: above 1 is faster", c.Runs[0].Label))
	}
	if comp {
		out = append(out, "comp_*: completion latency of bw tests, post to completion of signaled work requests")
	}
	if na {
		out = append(out, report.LatencyNA)
	}
	if miss {
		out = append(out, "-: the run has no such test")
	}
	return out
}

func checkUnit(unit string) error {
	_, _, err := result.Bandwidth{}.In(unit)
	return err
}

// WriteTable writes c as an aligned text table in the style of the report
// tables: one column per run, one row per test and metric. metrics are
// canonical names (see ParseMetrics; nil: the defaults); a metric that does
// not apply to a test's mode is left out for it. Bandwidth is in unit
// (UnitMiB, UnitMB or UnitGb), latency in µs. Each run after the first shows
// its ratio to the first, "12.34 (1.05x)"; n/a values and missing tests
// ("-") have no ratio. Lines after the table explain the marks used.
func (c *Comparison) WriteTable(w io.Writer, metrics []string, unit string) error {
	if err := checkUnit(unit); err != nil {
		return err
	}
	t := report.Table{{Head: "test", Left: true}, {Head: "metric", Left: true}}
	for _, r := range c.Runs {
		t = append(t, report.Column{Head: r.Label})
	}
	rows := c.rows(metrics, unit)
	var cells [][]string
	for _, r := range rows {
		row := []string{r.test, r.metric}
		for _, cl := range r.cells {
			row = append(row, cl.text)
		}
		cells = append(cells, row)
	}
	var b strings.Builder
	t.Write(&b, cells)
	for _, n := range c.notes(rows) {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes c as a GitHub Markdown table with the same rows and
// cells as WriteTable (test names in bold), followed by the explaining
// lines as a list.
func (c *Comparison) WriteMarkdown(w io.Writer, metrics []string, unit string) error {
	if err := checkUnit(unit); err != nil {
		return err
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, s := range cells {
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	head := []string{"test", "metric"}
	align := []string{"---", "---"}
	for _, r := range c.Runs {
		head = append(head, mdEscape(r.Label))
		align = append(align, "---:")
	}
	line(head)
	line(align)
	rows := c.rows(metrics, unit)
	for _, r := range rows {
		cells := []string{"", mdEscape(r.metric)}
		if r.test != "" {
			cells[0] = "**" + mdEscape(r.test) + "**"
		}
		for _, cl := range r.cells {
			cells = append(cells, mdEscape(cl.text))
		}
		line(cells)
	}
	if notes := c.notes(rows); len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape escapes the characters that would end a Markdown table cell or
// start emphasis (intraword _ does not in GitHub Markdown).
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `|`, `\|`, `*`, `\*`).Replace(s)
}

// gobenchArch is the goarch: line of WriteGobench; rdmabench records no
// architecture, so it is that of this binary (tests fix it).
var gobenchArch = runtime.GOARCH

// WriteGobench writes the results of docs in the Go benchmark format
// (golang.org/x/perf/benchfmt) so that benchstat can compare runs: a
// goos/goarch/pkg header, then for each document a "device:" configuration
// line and one line per result, such as
//
//	BenchmarkRDMA/op=send/mode=lat/size=2 2000 14700 ns/op 12220 p50-ns 97540 p99-ns ... 297000 max-ns
//
// Name parts are op, mode, size in bytes and, when not RDMA, transport. The
// iterations are the result's; ns/op is the mean latency (lat tests only),
// then every backed percentile and the maximum in ns (n/a ones are left out:
// sample latency in lat tests, completion latency in bw tests), and MB/s
// (10^6 bytes/s) and msgs/s for bw tests. Documents follow one another in the
// given order, so that benchstat takes repeated runs as samples.
func WriteGobench(w io.Writer, docs []*result.Document) error {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: " + gobenchArch + "\npkg: rdmabench\n")
	b.WriteString("Unit MB/s better=higher\nUnit msgs/s better=higher\n")
	num := func(f float64) string {
		// 9 significant digits (ns values stay exact), never an exponent.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 9, 64), 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	for _, d := range docs {
		dev := d.Env.Device
		if dev == "" {
			dev = "unknown"
		}
		b.WriteString("device: " + gobenchValue(dev) + "\n")
		for i := range d.Results {
			r := &d.Results[i]
			k := result.KeyOf(r)
			name := "BenchmarkRDMA/op=" + gobenchName(k.Op) + "/mode=" + gobenchName(k.Mode) + "/size=" + strconv.Itoa(k.SizeBytes)
			if k.Transport != "" {
				name += "/transport=" + gobenchName(k.Transport)
			}
			iters := r.Iterations
			if iters < 1 {
				iters = 1
			}
			b.WriteString(name + " " + strconv.FormatInt(iters, 10))
			l := &r.Latency
			if k.Mode != result.ModeBW && l.Count > 0 {
				b.WriteString(" " + num(l.Mean) + " ns/op")
			}
			for _, p := range []struct {
				n    result.Nanos
				unit string
			}{{l.P50, "p50-ns"}, {l.P90, "p90-ns"}, {l.P99, "p99-ns"}, {l.P99_9, "p99.9-ns"}, {l.P99_99, "p99.99-ns"}} {
				if p.n.OK {
					b.WriteString(" " + num(p.n.NS) + " " + p.unit)
				}
			}
			if l.Count > 0 {
				b.WriteString(" " + num(l.Max) + " max-ns")
			}
			if k.Mode == result.ModeBW {
				b.WriteString(" " + num(r.Bandwidth.MBPerSec) + " MB/s " + num(r.Bandwidth.Mpps*1e6) + " msgs/s")
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// gobenchName makes s safe in a benchmark name part: no spaces, slashes or
// '=' (a name part is key=value).
func gobenchName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '/' || r == '=' {
			return '_'
		}
		return r
	}, s)
}

// gobenchValue keeps a configuration value on one line.
func gobenchValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// Regression is a metric of a test that got worse than its limit allows.
type Regression struct {
	Test   result.Key
	Metric string  // canonical metric name, e.g. "p99"
	Base   float64 // baseline value: ns for latency, MB/s for bw, Mpps for mpps
	New    float64 // the new run's value, in the same unit
	Change float64 // New/Base - 1: +0.209 is 20.9 % more
	Limit  float64 // the allowed change as a fraction, e.g. 0.10
}

// Format describes r on one line with bandwidth in unit, such as
// "send lat 2B: p99 41.20 us -> 49.80 us (+20.9% > 10%)" or
// "write bw 65536B: bw 1200.00 MiB/sec -> 1100.00 MiB/sec (-8.3% < -5%)".
func (r Regression) Format(unit string) string {
	if checkUnit(unit) != nil {
		unit = result.UnitMiB
	}
	m := metricByKey(r.Metric)
	ul := m.unitLabel(unit)
	limit := strconv.FormatFloat(r.Limit*100, 'g', 4, 64)
	cmp := "> " + limit
	if m.rate {
		cmp = "< -" + limit
	}
	return fmt.Sprintf("%s: %s %s %s -> %s %s (%+.1f%% %s%%)", r.Test, m.name,
		m.format(r.Base, unit), ul, m.format(r.New, unit), ul, r.Change*100, cmp)
}

// String is Format with bandwidth in MiB/sec.
func (r Regression) String() string { return r.Format(result.UnitMiB) }

// RegressionError reports the regressions Gate found.
type RegressionError struct {
	Regressions []Regression
}

func (e *RegressionError) Error() string {
	var parts []string
	for _, r := range e.Regressions {
		parts = append(parts, fmt.Sprintf("%s %s %+.1f%%", r.Test, r.Metric, r.Change*100))
	}
	n := "regressions"
	if len(e.Regressions) == 1 {
		n = "regression"
	}
	return fmt.Sprintf("%d %s: %s", len(e.Regressions), n, strings.Join(parts, "; "))
}

// GateReport is the outcome of Gate.
type GateReport struct {
	Regressions []Regression
	Notes       []string // skipped metrics (n/a) and tests not compared
	Tests       int      // tests present in both documents
	Checked     int      // test × metric pairs compared
}

// Err returns a *RegressionError listing the regressions, or nil.
func (g *GateReport) Err() error {
	if len(g.Regressions) == 0 {
		return nil
	}
	return &RegressionError{Regressions: g.Regressions}
}

// Gate compares cur against base for every test present in both and every
// metric in limits (canonical name → allowed change as a fraction, as from
// ParseMaxRegress). A latency metric regresses when cur > base × (1+limit),
// bw and mpps when cur < base × (1−limit); bw and mpps are checked in bw
// tests only, latency metrics in both modes (completion latency in bw
// tests). A metric that is n/a on either side is skipped with a note; tests
// present in only one document are noted as not compared.
func Gate(base, cur *result.Document, limits map[string]float64) *GateReport {
	g := &GateReport{}
	var keys []metricDef
	for _, m := range metricDefs {
		if _, ok := limits[m.key]; ok {
			keys = append(keys, m)
		}
	}
	for k := range limits {
		if _, ok := lookupMetric(k); !ok {
			g.Notes = append(g.Notes, fmt.Sprintf("metric %q unknown, not checked", k))
		}
	}
	c := Compare([]*result.Document{base, cur}, nil)
	for _, t := range c.Tests {
		b, n := t.Results[0], t.Results[1]
		switch {
		case b == nil:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (only in the new run)", t.Key))
			continue
		case n == nil:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (only in the baseline)", t.Key))
			continue
		}
		g.Tests++
		for _, m := range keys {
			if !m.appliesTo(t.Key.Mode) {
				continue
			}
			bv, bok := m.value(b)
			nv, nok := m.value(n)
			var why string
			switch {
			case !bok && !nok:
				why = "n/a in both runs"
			case !bok:
				why = "n/a in the baseline"
			case !nok:
				why = "n/a in the new run"
			case bv <= 0:
				why = "zero in the baseline"
			}
			if why != "" {
				g.Notes = append(g.Notes, fmt.Sprintf("%s: %s not checked (%s)", t.Key, m.key, why))
				continue
			}
			g.Checked++
			limit := limits[m.key]
			worse := nv > bv*(1+limit)
			if m.rate {
				worse = nv < bv*(1-limit)
			}
			if worse {
				g.Regressions = append(g.Regressions, Regression{Test: t.Key, Metric: m.key,
					Base: bv, New: nv, Change: nv/bv - 1, Limit: limit})
			}
		}
	}
	return g
}
