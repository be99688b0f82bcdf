package report

import (
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Width is the terminal width, in columns, that the text tables and their
// notes fit by default; --wide lifts it for the tables (Fit with width 0).
const Width = 120

// Column is one column of a Table.
type Column struct {
	Head string
	Left bool // left-aligned (text); numbers are right-aligned
	// Drop is the column's turn to give way when the table is wider than
	// its width (Fit): 0 never, then 1 first, 2 next, ...; among equal
	// turns the rightmost goes first.
	Drop int
}

// Table is a text table in perftest's style: a leading space and columns
// separated by at least two spaces, wide enough for header and values.
type Table []Column

// Write writes the header and rows, one line each, without trailing
// space. text/tabwriter aligns the columns (widths in runes); it aligns
// every cell of a table one way, right, so the left-aligned columns come
// to it padded to their width.
func (t Table) Write(b *strings.Builder, rows [][]string) {
	width := make([]int, len(t)) // of the left-aligned columns
	for i, c := range t {
		if c.Left {
			width[i] = utf8.RuneCountInString(c.Head)
			for _, r := range rows {
				width[i] = max(width[i], utf8.RuneCountInString(r[i]))
			}
		}
	}
	var out strings.Builder
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cells func(i int) string) {
		for i, c := range t {
			s := cells(i)
			if c.Left {
				s += strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			}
			tw.Write([]byte(s + "\t")) // a strings.Builder does not fail
		}
		tw.Write([]byte("\n"))
	}
	line(func(i int) string { return t[i].Head })
	for _, r := range rows {
		line(func(i int) string { return r[i] })
	}
	tw.Flush()
	// every line starts with the padding of 2 before its first column:
	// perftest's tables have one space there
	for l := range strings.Lines(out.String()) {
		b.WriteString(strings.TrimRight(l[1:], " \n") + "\n")
	}
}

// WriteSplit writes t in parts that each fit width columns (0: one part):
// every part has the first keep columns (the rows' names) and as many of
// the others, in order, as fit; a blank line separates the parts.
func (t Table) WriteSplit(b *strings.Builder, rows [][]string, width, keep int) {
	if width <= 0 || t.LineWidth(rows) <= width || keep >= len(t) {
		t.Write(b, rows)
		return
	}
	for next := keep; next < len(t); {
		end := next + 1 // at least one column a part
		for end < len(t) {
			pt, prows := t.Keep(rows, func(i int) bool { return i < keep || i >= next && i <= end })
			if pt.LineWidth(prows) > width {
				break
			}
			end++
		}
		pt, prows := t.Keep(rows, func(i int) bool { return i < keep || i >= next && i < end })
		if next > keep {
			b.WriteString("\n")
		}
		pt.Write(b, prows)
		next = end
	}
}

// LineWidth is the width in columns of the widest line Write writes.
func (t Table) LineWidth(rows [][]string) int {
	w := 0
	for i, c := range t {
		cw := utf8.RuneCountInString(c.Head)
		for _, r := range rows {
			cw = max(cw, utf8.RuneCountInString(r[i]))
		}
		w += cw + 2
	}
	return w - 1
}

// Fit drops columns, by their Drop turn, until the table is at most width
// columns wide (0: no limit), and returns the table and rows left and the
// heads of the columns dropped, in table order.
func (t Table) Fit(rows [][]string, width int) (Table, [][]string, []string) {
	gone := make([]bool, len(t))
	for width > 0 {
		kt, krows := t.keep(rows, gone)
		if kt.LineWidth(krows) <= width {
			break
		}
		at := -1
		for i, c := range t {
			if !gone[i] && c.Drop > 0 && (at < 0 || c.Drop <= t[at].Drop) {
				at = i
			}
		}
		if at < 0 {
			break // nothing left to drop
		}
		gone[at] = true
	}
	var heads []string
	for i, c := range t {
		if gone[i] {
			heads = append(heads, c.Head)
		}
	}
	kt, krows := t.keep(rows, gone)
	return kt, krows, heads
}

// Keep returns the table and rows with only the columns for which keep
// says true.
func (t Table) Keep(rows [][]string, keep func(i int) bool) (Table, [][]string) {
	gone := make([]bool, len(t))
	for i := range t {
		gone[i] = !keep(i)
	}
	return t.keep(rows, gone)
}

func (t Table) keep(rows [][]string, gone []bool) (Table, [][]string) {
	var kt Table
	for i, c := range t {
		if !gone[i] {
			kt = append(kt, c)
		}
	}
	krows := make([][]string, len(rows))
	for j, r := range rows {
		for i, s := range r {
			if !gone[i] {
				krows[j] = append(krows[j], s)
			}
		}
	}
	return kt, krows
}

// Wrap breaks text (one line) into lines of at most width columns at
// spaces, each line after the first starting with indent; the spaces
// within a line stay as they are, and a word longer than a line stays
// whole. Each line it returns ends in a newline.
func Wrap(text string, width int, indent string) string {
	var b strings.Builder
	col, start := 0, true
	for rest := text; rest != ""; {
		word := strings.TrimLeft(rest, " ")
		space := rest[:len(rest)-len(word)]
		if k := strings.IndexByte(word, ' '); k >= 0 {
			word = word[:k]
		}
		rest = rest[len(space)+len(word):]
		n := utf8.RuneCountInString(space) + utf8.RuneCountInString(word)
		if !start && col+n > width {
			b.WriteString("\n" + indent)
			col, space, n = utf8.RuneCountInString(indent), "", utf8.RuneCountInString(word)
		}
		b.WriteString(space + word)
		col += n
		start = start && word == ""
	}
	b.WriteString("\n")
	return b.String()
}

// Note is Wrap at Width with an indent of two spaces: the lines under a
// table that explain it.
func Note(text string) string { return Wrap(text, Width, "  ") }
