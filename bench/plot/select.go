package plot

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// plotTest is one result of one document.
type plotTest struct {
	run   int    // index of the document
	label string // the document's label
	doc   *result.Document
	r     *result.Result
}

func (t plotTest) name() string {
	return fmt.Sprintf("%s %s %s %dB", t.label, t.r.Op, t.r.Mode, t.r.SizeBytes)
}

type plotTests []plotTest

// testIndex returns the index of tests[i]'s op, mode and size among the
// distinct ones of ts, in order of appearance: runs of one test share it.
func (ts plotTests) testIndex(i int) int {
	key := func(t plotTest) string { return fmt.Sprintf("%s/%s/%d", t.r.Op, t.r.Mode, t.r.SizeBytes) }
	return slices.Index(distinct(ts, key), key(ts[i]))
}

// plotSeries is the results of one document, op and mode, by size.
type plotSeries struct {
	run      int
	label    string
	op, mode string
	color    int // index of op and mode among all series
	tests    []plotTest
}

func (s plotSeries) name() string {
	return fmt.Sprintf("%s %s %s", s.label, s.op, s.mode)
}

// series groups ts by document, op and mode, each sorted by size.
func (ts plotTests) series() []plotSeries {
	opMode := func(t plotTest) string { return t.r.Op + " " + t.r.Mode }
	keys := distinct(ts, opMode)
	var out []plotSeries
	for run := range ts.maxRun() + 1 {
		for ki, k := range keys {
			var s plotSeries
			for _, t := range ts {
				if t.run == run && opMode(t) == k {
					s.tests = append(s.tests, t)
				}
			}
			if len(s.tests) == 0 {
				continue
			}
			slices.SortStableFunc(s.tests, func(a, b plotTest) int { return a.r.SizeBytes - b.r.SizeBytes })
			t := s.tests[0]
			s.run, s.label, s.op, s.mode, s.color = run, t.label, t.r.Op, t.r.Mode, ki
			out = append(out, s)
		}
	}
	return out
}

func (ts plotTests) maxRun() int {
	m := 0
	for _, t := range ts {
		m = max(m, t.run)
	}
	return m
}

// selectTests returns the results of docs matching sel's ops, modes and
// sizes, in document then result order.
func selectTests(docs []*result.Document, labels []string, sel Selection) plotTests {
	var out plotTests
	for i, d := range docs {
		if d == nil {
			continue
		}
		label := strconv.Itoa(i + 1)
		if i < len(labels) {
			label = labels[i]
		}
		for j := range d.Results {
			r := &d.Results[j]
			if (len(sel.Ops) == 0 || slices.Contains(sel.Ops, r.Op)) &&
				(len(sel.Modes) == 0 || slices.Contains(sel.Modes, r.Mode)) &&
				(len(sel.Sizes) == 0 || slices.Contains(sel.Sizes, r.SizeBytes)) {
				out = append(out, plotTest{run: i, label: label, doc: d, r: r})
			}
		}
	}
	return out
}

// selectOrErr is selectTests, with an error naming what the documents hold
// when nothing matches.
func selectOrErr(docs []*result.Document, labels []string, sel Selection) (plotTests, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("plot: %w: no result files", ErrNothingToPlot)
	}
	tests := selectTests(docs, labels, sel)
	if len(tests) > 0 {
		return tests, nil
	}
	all := selectTests(docs, labels, Selection{})
	if len(all) == 0 {
		return nil, fmt.Errorf("plot: %w: the result files hold no results", ErrNothingToPlot)
	}
	var want []string
	if len(sel.Ops) > 0 {
		want = append(want, "op "+strings.Join(sel.Ops, ","))
	}
	if len(sel.Modes) > 0 {
		want = append(want, "mode "+strings.Join(sel.Modes, ","))
	}
	if len(sel.Sizes) > 0 {
		want = append(want, "size "+joinInts(sel.Sizes))
	}
	ops := distinct(all, func(t plotTest) string { return t.r.Op })
	modes := distinct(all, func(t plotTest) string { return t.r.Mode })
	sizes := distinct(all, func(t plotTest) int { return t.r.SizeBytes })
	slices.Sort(sizes)
	return nil, fmt.Errorf("plot: %w: no result has %s; the files hold op %s, mode %s, size %s",
		ErrNothingToPlot, strings.Join(want, " and "), strings.Join(ops, ","), strings.Join(modes, ","), joinInts(sizes))
}

// histTests selects the tests of a percentile or CDF plot: with no modes in
// sel, the latency-mode ones if any; with no sizes, the smallest size. Tests
// without a histogram or samples are left out.
func histTests(docs []*result.Document, labels []string, sel Selection) (plotTests, error) {
	tests, err := selectOrErr(docs, labels, sel)
	if err != nil {
		return nil, err
	}
	tests = preferMode(tests, sel, result.ModeLat)
	if len(sel.Sizes) == 0 {
		sizes := distinct(tests, func(t plotTest) int { return t.r.SizeBytes })
		smallest := slices.Min(sizes)
		tests = slices.DeleteFunc(tests, func(t plotTest) bool { return t.r.SizeBytes != smallest })
	}
	kept := slices.DeleteFunc(slices.Clone(tests), func(t plotTest) bool { return t.r.Histogram == "" || t.r.Samples == 0 })
	if len(kept) == 0 {
		return nil, fmt.Errorf("plot: %w: no selected test has a latency histogram (%s)", ErrNothingToPlot, tests[0].name())
	}
	return kept, nil
}

// preferMode keeps the tests of mode when sel names no mode and some test
// has it.
func preferMode(tests plotTests, sel Selection, mode string) plotTests {
	if len(sel.Modes) > 0 || !slices.ContainsFunc(tests, func(t plotTest) bool { return t.r.Mode == mode }) {
		return tests
	}
	return slices.DeleteFunc(tests, func(t plotTest) bool { return t.r.Mode != mode })
}

func distinct[T comparable](ts plotTests, key func(plotTest) T) []T {
	var out []T
	for _, t := range ts {
		if k := key(t); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
