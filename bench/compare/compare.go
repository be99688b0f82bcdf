package compare

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

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
// ("-") have no ratio. Lines after the table explain the marks used. A
// table wider than width columns (0: no limit, --wide) is split into
// tables of as many runs as fit, each with the test and metric columns
// and the first run.
func (c *Comparison) WriteTable(w io.Writer, metrics []string, unit string, width int) error {
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
	t.WriteSplit(&b, cells, width, 3) // every part with the first run, the ratios' reference
	for _, n := range c.notes(rows) {
		b.WriteString(report.Note(n))
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
