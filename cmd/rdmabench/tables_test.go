package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/golden"
)

// termWidth is the terminal the tables fit by default (without --wide).
const termWidth = report.Width

// Result documents from real guest runs, as the docs' host blocks find them.
const (
	demoJSON    = "../../bench/plot/testdata/a.json" // make demo's loopback sweep: send, write, read; lat, bw; 2, 1K, 64K
	demo2JSON   = "../../bench/plot/testdata/b.json" // the same sweep again
	tcpJSON     = "../../bench/fabric/testdata/tcp.json"
	repeatJSON  = "../../bench/compare/testdata/repeat5.json" // --repeat 5
	repeat2JSON = "../../bench/compare/testdata/repeat5-p99x1.3.json"
)

// TestDemoTables pins every table and note that run/loopback, compare and
// report print for a demo-like run (testdata/demo_tables.golden), and holds
// each line of the default output to a 120-column terminal; --wide is
// pinned too, and may be wider.
func TestDemoTables(t *testing.T) {
	var all bytes.Buffer
	section := func(title string, out string, wide bool) {
		fmt.Fprintf(&all, "$ %s\n%s\n", title, out)
		if wide {
			return
		}
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > termWidth {
				t.Errorf("%s: line %d is %d columns (> %d):\n%s", title, i+1, n, termWidth, l)
			}
		}
	}
	for _, c := range []struct {
		title string
		path  string
		wide  bool
	}{
		{"rdmabench loopback (the demo sweep)", demoJSON, false},
		{"rdmabench loopback --wide (the demo sweep)", demoJSON, true},
		{"rdmabench loopback --transport tcp", tcpJSON, false},
		{"rdmabench loopback --repeat 5", repeatJSON, false},
	} {
		doc, err := result.ReadJSONFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := printReport(doc, &b, "", report.Options{Unit: result.UnitMiB, Width: tableWidth(c.wide)}); err != nil {
			t.Fatal(err)
		}
		section(c.title, b.String(), c.wide)
	}
	for _, args := range [][]string{
		{"compare", demoJSON, demo2JSON},
		{"compare", "--baseline", demoJSON, demo2JSON, "--max-regress", "p99=10%"},
		{"compare", "--baseline", repeatJSON, repeat2JSON},
		{"compare", "--noise", repeatJSON},
		{"report", demoJSON},
		{"report", fabricFixtures[0], fabricFixtures[1], fabricFixtures[2]},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		s := out.String()
		if errOut.Len() > 0 {
			s += "(stderr)\n" + errOut.String()
		}
		s += fmt.Sprintf("(exit %d)\n", code)
		section("rdmabench "+strings.ReplaceAll(strings.Join(args, " "), "../../", ""), s, false)
	}
	golden.Check(t, "demo_tables.golden", all.Bytes())
}
