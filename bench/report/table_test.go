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

// TestTableRunes: widths count runes, not bytes ("µs" is 2 columns).
func TestTableRunes(t *testing.T) {
	var b strings.Builder
	Table{{Head: "unit", Left: true}, {Head: "v"}}.Write(&b, [][]string{{"µs", "1"}, {"usec", "µ"}})
	want := " unit  v\n µs    1\n usec  µ\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestTableFit(t *testing.T) {
	tab := Table{{Head: "op", Left: true}, {Head: "aaaaaaaaaa", Drop: 2}, {Head: "bbbbbbbbbb", Drop: 1}, {Head: "cccccccccc", Drop: 1}, {Head: "dddddddddd"}}
	rows := [][]string{{"send", "1", "2", "3", "4"}}
	if w := tab.LineWidth(rows); w != 1+4+4*12 {
		t.Fatalf("LineWidth %d", w)
	}
	for _, tc := range []struct {
		width int
		heads string
		gone  string
	}{
		{0, "op aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd", ""},
		{53, "op aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd", ""},
		{52, "op aaaaaaaaaa bbbbbbbbbb dddddddddd", "cccccccccc"}, // the rightmost of turn 1 first
		{40, "op aaaaaaaaaa dddddddddd", "bbbbbbbbbb cccccccccc"},
		{20, "op dddddddddd", "aaaaaaaaaa bbbbbbbbbb cccccccccc"}, // as narrow as it goes
	} {
		ft, frows, gone := tab.Fit(rows, tc.width)
		var heads []string
		for _, c := range ft {
			heads = append(heads, c.Head)
		}
		if strings.Join(heads, " ") != tc.heads || strings.Join(gone, " ") != tc.gone || len(frows[0]) != len(ft) {
			t.Errorf("width %d: kept %q (rows %q), dropped %q; want %q, dropped %q", tc.width, heads, frows, gone, tc.heads, tc.gone)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		text, indent string
		width        int
		want         string
	}{
		{"short line", "  ", 20, "short line\n"},
		{"one two three four five", "  ", 11, "one two\n  three\n  four five\n"},
		{" R  timed interval: a full round trip", "      ", 21, " R  timed interval: a\n      full round trip\n"},
		{"averyveryverylongword and more", "  ", 8, "averyveryverylongword\n  and\n  more\n"},
	} {
		if got := Wrap(tc.text, tc.width, tc.indent); got != tc.want {
			t.Errorf("Wrap(%q, %d): %q, want %q", tc.text, tc.width, got, tc.want)
		}
	}
}

func TestTableWriteSplit(t *testing.T) {
	tab := Table{{Head: "test", Left: true}, {Head: "metric", Left: true}, {Head: "aaaaaaaaaa"}, {Head: "bbbbbbbbbb"}, {Head: "cccccccccc"}}
	rows := [][]string{{"send lat 2B", "p50[usec]", "1", "2", "3"}}
	var b strings.Builder
	tab.WriteSplit(&b, rows, 50, 2)
	want := "" +
		" test         metric     aaaaaaaaaa  bbbbbbbbbb\n" +
		" send lat 2B  p50[usec]           1           2\n" +
		"\n" +
		" test         metric     cccccccccc\n" +
		" send lat 2B  p50[usec]           3\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	tab.WriteSplit(&b, rows, 0, 2)
	if strings.Count(b.String(), "\n") != 2 {
		t.Errorf("width 0 split:\n%s", b.String())
	}
}
