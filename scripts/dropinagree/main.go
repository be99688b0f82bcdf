// Command dropinagree is the analysis of TestDropinAgree (internal/e2e/exp)
// (make dropin-agree; docs/perftest.md, "Agreement with perftest"): it
// reads the guest's outputs, the client's table of every run (perftest's
// printed output, parsed by bench/perftest as `rdmabench import perftest`
// does), takes each pairing's median of t_typical (latency, µs) or BW
// average (bandwidth, MiB/s) per tool, and prints the medians, the ratio
// of each mixed pairing to perftest against perftest, and a 95 % bootstrap
// interval of that ratio (each pairing's runs resampled from all rounds,
// bench/compare), then the same for the better quartile (betterQ): the
// guest's runs fall into a fast and a slow state, perftest's alone
// included, and the share of slow runs moves the medians from batch to
// batch; the better quartiles compare the tools within the fast state.
// A run that failed in the guest is listed, and a run whose client
// printed no figure is left out of its pairing (perftest's own clock
// calibration fails now and then under TCG: "Correlation coefficient r^2
// ... < 0.9"). Pure Go. Exit 1 when a pairing of a test
// has no run with a figure, 2 on bad usage.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/perftest"
)

// The pairings each round runs, in the files' names: the server, then the
// client.
var pairings = []struct{ key, label string }{
	{"pt-pt", "perftest ↔ perftest"},
	{"pt-rb", "perftest server, drop-in client"},
	{"rb-pt", "drop-in server, perftest client"},
}

// test is one line of the guest's agree.list: KEY<TAB>TOOL ARGS.
type test struct{ key, cmd string }

func main() {
	dir := flag.String("dir", "", "the guest's /out, brought back")
	resamples := flag.Int("resamples", 10000, "bootstrap resamples per ratio")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "dropinagree: need -dir")
		os.Exit(2)
	}
	if err := run(os.Stdout, *dir, *resamples); err != nil {
		fmt.Fprintln(os.Stderr, "dropinagree:", err)
		os.Exit(1)
	}
}

// run prints the table for the outputs in dir.
func run(w io.Writer, dir string, resamples int) error {
	tests, rounds, placement, err := readList(filepath.Join(dir, "agree.list"))
	if err != nil {
		return err
	}
	if placement != "" {
		fmt.Fprintf(w, "placement: %s\n", placement)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "agree.fail")); err == nil && len(b) > 0 {
		fmt.Fprintf(w, "runs that failed in the guest (a run whose client printed its figure still counts):\n%s\n", b)
	}
	fmt.Fprintf(w, "%d rounds; each cell: the median of the client's figure, and the ratio to perftest ↔ perftest [95 %% bootstrap interval];\n"+
		"then the better quartile's (the 25th percentile of a time, the 75th of a rate) and its ratio [interval]\n\n", rounds)
	fmt.Fprintf(w, "| test | figure | %s | %s | %s |\n|---|---|---|---|---|\n", pairings[0].label, pairings[1].label, pairings[2].label)
	var leftOut []string // runs without a figure
	for _, t := range tests {
		vals := make([][][]float64, len(pairings)) // [pairing][round]: the run's figure, or none
		var all [3][]float64
		figure := ""
		for p, pr := range pairings {
			for r := 1; r <= rounds; r++ {
				name := filepath.Join(dir, fmt.Sprintf("%s.%s.%d.txt", t.key, pr.key, r))
				v, fig, err := clientFigure(name)
				if err != nil {
					leftOut = append(leftOut, err.Error())
					vals[p] = append(vals[p], nil)
					continue
				}
				vals[p] = append(vals[p], []float64{v})
				all[p] = append(all[p], v)
				figure = fig
			}
			if len(all[p]) == 0 {
				return fmt.Errorf("%s, %s: no run printed its figure", t.cmd, pr.label)
			}
		}
		q := betterQ(figure)
		cells := []string{fmt.Sprintf("%.2f; q%.0f %.2f", compare.MedianOf(all[0]), 100*q, compare.QuantileOf(all[0], q))}
		for p := 1; p < len(pairings); p++ {
			cells = append(cells, quantileCell(all[p], all[0], 0.5, resamples)+
				fmt.Sprintf("; q%.0f ", 100*q)+quantileCell(all[p], all[0], q, resamples))
		}
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", t.cmd, figure, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	for _, l := range leftOut {
		fmt.Fprintf(w, "left out: %s\n", l)
	}
	for _, t := range tests {
		for p, pr := range pairings {
			var runs []string
			for r := 1; r <= rounds; r++ {
				v, _, err := clientFigure(filepath.Join(dir, fmt.Sprintf("%s.%s.%d.txt", t.key, pr.key, r)))
				if err != nil {
					runs = append(runs, "-")
					continue
				}
				runs = append(runs, fmt.Sprintf("%.2f", v))
			}
			fmt.Fprintf(w, "%s, %s: %s\n", t.cmd, pairings[p].label, strings.Join(runs, " "))
		}
	}
	return nil
}

// readList reads agree.list: "rounds N", an optional "placement TEXT"
// (where the ends ran), then one KEY<TAB>TOOL ARGS line per test.
func readList(name string) (tests []test, rounds int, placement string, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "rounds "); ok {
			if rounds, err = strconv.Atoi(n); err != nil || rounds < 1 {
				return nil, 0, "", fmt.Errorf("%s: rounds %q: want a positive count", name, n)
			}
			continue
		}
		if p, ok := strings.CutPrefix(line, "placement "); ok {
			placement = p
			continue
		}
		key, cmd, ok := strings.Cut(line, "\t")
		if !ok || key == "" || strings.ContainsAny(key, "/. ") {
			return nil, 0, "", fmt.Errorf("%s: line %q: want KEY<TAB>TOOL ARGS", name, line)
		}
		tests = append(tests, test{key, cmd})
	}
	if err := sc.Err(); err != nil {
		return nil, 0, "", err
	}
	if rounds == 0 || len(tests) == 0 {
		return nil, 0, "", fmt.Errorf("%s: no rounds line or no test", name)
	}
	return tests, rounds, placement, nil
}

// quantileCell is the q quantile of a pairing's runs a, its ratio to
// perftest ↔ perftest's (b) and the bootstrap interval of that ratio:
// "v, ratio r [lo, hi]". One run of each pairing a round: resampling
// within a round would redraw that one run, so the runs are drawn from
// all rounds (the alternation already spreads drift over the pairings).
func quantileCell(a, b []float64, q float64, resamples int) string {
	v, base := compare.QuantileOf(a, q), compare.QuantileOf(b, q)
	cell := fmt.Sprintf("%.2f", v)
	if base > 0 {
		cell += fmt.Sprintf(", ratio %.3f", v/base)
		if lo, hi, ok := compare.QuantileRatioInterval([]compare.RatioGroup{{A: a, B: b}}, q, resamples, 0.95); ok {
			cell += fmt.Sprintf(" [%.3f, %.3f]", lo, hi)
		}
	}
	return cell
}

// betterQ is the quantile of a figure's better quartile: the 25th
// percentile of a time (t_typical), the 75th of a rate (BW average).
func betterQ(figure string) float64 {
	if strings.HasPrefix(figure, "t_typical") {
		return 0.25
	}
	return 0.75
}

// clientFigure is a client's t_typical (latency tables) or BW average
// (bandwidth tables) from its first result row, and the figure's name.
func clientFigure(name string) (float64, string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, "", err
	}
	p, err := perftest.ParsePrinted(b)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", name, err)
	}
	if len(p.Rows) == 0 {
		return 0, "", fmt.Errorf("%s: no result row", name)
	}
	key, fig := perftest.ColTypical, "t_typical [µs]"
	if p.BWUnit != "" {
		key, fig = perftest.ColBWAvg, "BW average ["+p.BWUnit+"]"
	}
	v, ok := p.Value(p.Rows[0], key)
	if !ok {
		return 0, "", fmt.Errorf("%s: no %s column", name, key)
	}
	return v, fig, nil
}
