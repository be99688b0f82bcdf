package report

import (
	"strconv"
	"strings"
	"testing"
)

// TestTableLayout pins Table.Write's layout: a leading space, two spaces
// between columns, text left and numbers right, empty cells, no trailing
// space, a header wider than its cells and cells wider than their header.
func TestTableLayout(t *testing.T) {
	tab := Table{{Head: "test", Left: true}, {Head: "metric", Left: true}, {Head: "a.json"}, {Head: "b"}, {Head: "flags", Left: true}}
	var b strings.Builder
	tab.Write(&b, [][]string{
		{"send lat 2B", "p50[usec]", "18.50", "11.40 (0.62x)", "R"},
		{"", "p99[usec]", "806.91", "n/a", ""},
		{"read bw 64K", "BW[MiB/sec]", "64.03", "-", ""},
	})
	want := "" +
		" test         metric       a.json              b  flags\n" +
		" send lat 2B  p50[usec]     18.50  11.40 (0.62x)  R\n" +
		"              p99[usec]    806.91            n/a\n" +
		" read bw 64K  BW[MiB/sec]   64.03              -\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	Table{{Head: "x"}}.Write(&b, nil)
	if got := b.String(); got != " x\n" {
		t.Errorf("header only: %q", got)
	}
}

// BenchmarkTableWrite writes a latency table of 18 rows and 12 columns.
func BenchmarkTableWrite(b *testing.B) {
	var tab Table
	tab = append(tab, Column{Head: "op", Left: true})
	for i := range 11 {
		tab = append(tab, Column{Head: "col" + strconv.Itoa(i) + "[usec]"})
	}
	var rows [][]string
	for i := range 18 {
		row := []string{"write"}
		for j := range 11 {
			row = append(row, strconv.FormatFloat(float64(i*j)*13.37, 'f', 2, 64))
		}
		rows = append(rows, row)
	}
	for b.Loop() {
		var s strings.Builder
		tab.Write(&s, rows)
	}
}
