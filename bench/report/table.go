package report

import (
	"fmt"
	"strings"
)

// Column is one column of a Table.
type Column struct {
	Head string
	Left bool // left-aligned (text); numbers are right-aligned
}

// Table is a text table in perftest's style: a leading space and columns
// separated by at least two spaces, wide enough for header and values.
type Table []Column

func (t Table) Write(b *strings.Builder, rows [][]string) {
	width := make([]int, len(t))
	for i, c := range t {
		width[i] = len(c.Head)
	}
	for _, r := range rows {
		for i, s := range r {
			width[i] = max(width[i], len(s))
		}
	}
	cells := func(r []string) {
		var l strings.Builder
		for i, s := range r {
			sep := "  "
			if i == 0 {
				sep = " "
			}
			l.WriteString(sep)
			if t[i].Left {
				fmt.Fprintf(&l, "%-*s", width[i], s)
			} else {
				fmt.Fprintf(&l, "%*s", width[i], s)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	head := make([]string, len(t))
	for i, c := range t {
		head[i] = c.Head
	}
	cells(head)
	for _, r := range rows {
		cells(r)
	}
}
