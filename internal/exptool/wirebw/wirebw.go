// Package wirebw summarises make bench-wire (TestWireBW in
// internal/e2e/exp/pair): alternating runs of rdmabench and perftest's
// ib_write_bw across the two-guest wire, in the order the test ran them. It reads the client guest's files (rb-<i>.json,
// rb-<i>.txt, pt-<i>.txt) and both guests' counter dumps
// (<tool>-ctr-<i>-<0|1>.txt: rxe's hw_counters and the guest's CPU time,
// "name value" per line), and prints each run, the ratio of the medians
// (rdmabench over perftest) per round and over all rounds, and a 95 %
// bootstrap interval for the overall ratio; with the guests' samplers
// (samples.txt, steady.go) also each run's steady packet rate and CPUs,
// and the ratio of the tools' median steady packet rates. Pure Go: result
// documents and text only; scripts/wirebw is its command.
package wirebw

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
)

// run is one run of one tool: its bandwidth (MiB/s) or why it failed.
type run struct {
	i      int    // position in the order, from 1
	tool   string // "rb" or "pt"
	round  int    // from 0
	mibps  float64
	failed string
	retx   [2]string  // rxe's completer_retry_err delta: client, server ("?" unknown)
	busy   [2]string  // the guest's CPUs busy, %: client, server
	steady [2]*steady // the steady state from the samplers: client, server (nil: none)
}

// Summarise prints the runs of dir (the client's files in dir/b, the
// server's in dir/a) in order (rb or pt each, 8 per round), the ratio of the
// medians per round and over all rounds with its bootstrap interval over reps
// resamples, held to target.
func Summarise(dir string, order []string, reps int, target float64, w io.Writer) error {
	return summarise(dir, order, reps, target, w)
}

func summarise(dir string, order []string, reps int, target float64, w io.Writer) error {
	if dir == "" || len(order) == 0 {
		return errors.New("need -dir and -order")
	}
	runs, err := readRuns(dir, order)
	if err != nil {
		return err
	}
	fails := 0
	for _, r := range runs {
		name := map[string]string{"rb": "rdmabench", "pt": "ib_write_bw"}[r.tool]
		if r.failed != "" {
			fails++
			fmt.Fprintf(w, "run %d %s: FAILED: %s\n", r.i, name, r.failed)
			continue
		}
		fmt.Fprintf(w, "run %d %s: %.2f MiB/s (retransmissions client %s, server %s; guest CPUs busy client %s, server %s)%s\n",
			r.i, name, r.mibps, r.retx[0], r.retx[1], r.busy[0], r.busy[1], steadyLine(r))
	}
	rounds := runs[len(runs)-1].round + 1
	for k := 0; k < rounds; k++ {
		rb, pt := values(runs, k)
		if len(rb) == 0 || len(pt) == 0 {
			fmt.Fprintf(w, "round %d: no run of one tool succeeded\n", k+1)
			continue
		}
		fmt.Fprintf(w, "round %d: rdmabench %.2f MiB/s (%d runs), ib_write_bw %.2f MiB/s (%d runs); ratio %.3f\n",
			k+1, median(rb), len(rb), median(pt), len(pt), median(rb)/median(pt))
	}
	rb, pt := values(runs, -1)
	if len(rb) == 0 || len(pt) == 0 {
		return fmt.Errorf("no run of one tool succeeded (%d runs failed)", fails)
	}
	ratio := median(rb) / median(pt)
	lo, hi := bootstrap(runs, rounds, reps)
	verdict := "PASS"
	if lo < target {
		verdict = "MISS"
		if ratio >= target {
			verdict = "UNDECIDED" // the point is there, the interval is not
		}
	}
	fmt.Fprintf(w, "all %d rounds: rdmabench %.2f MiB/s (%d runs), ib_write_bw %.2f MiB/s (%d runs); ratio of medians %.3f, 95 %% bootstrap interval %.3f-%.3f (%d resamples within rounds); target >= %.2f: %s\n",
		rounds, median(rb), len(rb), median(pt), len(pt), ratio, lo, hi, reps, target, verdict)
	if rb, pt := valuesOf(runs, -1, steadyPPS); len(rb) > 0 && len(pt) > 0 {
		lo, hi := bootstrapOf(runs, rounds, reps, steadyPPS)
		fmt.Fprintf(w, "steady state on the wire (rxe2's sent packets a second on the client, the same counter for both tools): rdmabench %.0f (%d runs), ib_write_bw %.0f (%d runs); ratio of medians %.3f, 95 %% bootstrap interval %.3f-%.3f\n",
			median(rb), len(rb), median(pt), len(pt), median(rb)/median(pt), lo, hi)
	}
	fmt.Fprintf(w, "%d runs failed\n", fails)
	return nil
}

// steadyLine is run r's steady state for its line ("" without samples).
func steadyLine(r run) string {
	c, s := r.steady[0], r.steady[1]
	if c == nil || s == nil {
		return ""
	}
	return fmt.Sprintf("; steady %.0f packets/s over %.1f s, CPU0/CPU1 busy client %.0f/%.0f %%, server %.0f/%.0f %%",
		c.pps, c.secs, c.busy[0], c.busy[1], s.busy[0], s.busy[1])
}

// steadyPPS is a run's client-side steady packet rate.
func steadyPPS(r run) (float64, bool) {
	if r.steady[0] == nil {
		return 0, false
	}
	return r.steady[0].pps, true
}

// bandwidth is a run's own bandwidth figure, MiB/s.
func bandwidth(r run) (float64, bool) { return r.mibps, true }

// values returns each tool's bandwidths of its successful runs of round k
// (all rounds: -1).
func values(runs []run, k int) (rb, pt []float64) { return valuesOf(runs, k, bandwidth) }

// valuesOf is values of the figure get (runs it has no figure for left out).
func valuesOf(runs []run, k int, get func(run) (float64, bool)) (rb, pt []float64) {
	for _, r := range runs {
		if r.failed != "" || (k >= 0 && r.round != k) {
			continue
		}
		v, ok := get(r)
		if !ok {
			continue
		}
		if r.tool == "rb" {
			rb = append(rb, v)
		} else {
			pt = append(pt, v)
		}
	}
	return rb, pt
}

// bootstrap is the 95 % percentile interval of the ratio of medians over
// reps resamples, drawn within every round (compare.MedianRatioInterval): a
// bed that slows over its life (rounds differ) does not widen the interval
// with drift that the alternating order cancels.
func bootstrap(runs []run, rounds, reps int) (lo, hi float64) {
	return bootstrapOf(runs, rounds, reps, bandwidth)
}

// bootstrapOf is bootstrap of the figure get.
func bootstrapOf(runs []run, rounds, reps int, get func(run) (float64, bool)) (lo, hi float64) {
	groups := make([]compare.RatioGroup, rounds)
	for k := range groups {
		groups[k].A, groups[k].B = valuesOf(runs, k, get)
	}
	lo, hi, _ = compare.MedianRatioInterval(groups, reps, 0.95)
	return lo, hi
}

// median of vals (not modified).
func median(vals []float64) float64 { return compare.MedianOf(vals) }

func readRuns(dir string, order []string) ([]run, error) {
	var runs []run
	var samples [2][]sample // client, server
	for side, g := range []string{"b", "a"} {
		var err error
		if samples[side], err = readSamples(filepath.Join(dir, g, "samples.txt")); err != nil {
			return nil, err
		}
	}
	for j, tool := range order {
		r := run{i: j + 1, tool: tool, round: j / 8}
		b := filepath.Join(dir, "b")
		var err error
		switch tool {
		case "rb":
			r.mibps, r.failed, err = rdmabenchRun(b, r.i)
		case "pt":
			r.mibps, r.failed, err = perftestRun(b, r.i)
		default:
			return nil, fmt.Errorf("order: %q is neither rb nor pt", tool)
		}
		if err != nil {
			return nil, err
		}
		for side, g := range []string{"b", "a"} {
			before, after := counters(filepath.Join(dir, g, fmt.Sprintf("%s-ctr-%d-0.txt", tool, r.i))),
				counters(filepath.Join(dir, g, fmt.Sprintf("%s-ctr-%d-1.txt", tool, r.i)))
			r.retx[side], r.busy[side] = "?", "?"
			if a, ok := after["completer_retry_err"]; ok {
				r.retx[side] = strconv.FormatInt(a-before["completer_retry_err"], 10)
			}
			if t := after["cpu_total"] - before["cpu_total"]; t > 0 {
				r.busy[side] = fmt.Sprintf("%.0f%%", 100*float64(after["cpu_busy"]-before["cpu_busy"])/float64(t))
			}
		}
		for side := range samples {
			if st, ok := steadyState(samples[side], fmt.Sprintf("%s-%d", tool, r.i), side == 1); ok {
				r.steady[side] = &st
			}
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// rdmabenchRun reads run i's document; a run whose text says "failed"
// (the script appends it when the tool exits non-zero) failed.
func rdmabenchRun(dir string, i int) (float64, string, error) {
	if why := failure(filepath.Join(dir, fmt.Sprintf("rb-%d.txt", i)), "rdmabench:"); why != "" {
		return 0, why, nil
	}
	doc, err := result.ReadJSONFile(filepath.Join(dir, fmt.Sprintf("rb-%d.json", i)))
	if err != nil {
		return 0, "", err
	}
	if len(doc.Results) == 0 {
		return 0, "no result in the document", nil
	}
	return doc.Results[0].Bandwidth.MiBPerSec, "", nil
}

// perftestRun reads run i's ib_write_bw output: the row after the header
// "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]".
// perftest's MB/sec is 2^20 bytes/s in most versions and 10^6 in some:
// the message rate decides (64 KiB messages).
func perftestRun(dir string, i int) (float64, string, error) {
	path := filepath.Join(dir, fmt.Sprintf("pt-%d.txt", i))
	if why := failure(path, "error", "fail", "couldn't"); why != "" {
		return 0, why, nil
	}
	bw, rate, err := perftestRow(path)
	if err != nil {
		return 0, "", err
	}
	mib := rate * 1e6 * 65536 / (1 << 20)
	if bw > 0.9*mib && bw < 1.1*mib {
		return bw, "", nil
	}
	return bw * 1e6 / (1 << 20), "", nil
}

// perftestRow is the first row's BW average and MsgRate, read by
// rdmabench's parser of perftest's output (bench/perftest).
func perftestRow(path string) (bw, rate float64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	p, err := perftest.ParsePrinted(b)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Rows) == 0 || p.Column(perftest.ColBWAvg) < 0 {
		return 0, 0, fmt.Errorf("%s: no bandwidth row after the BW average header", path)
	}
	bw, _ = p.Value(p.Rows[0], perftest.ColBWAvg)
	rate, _ = p.Value(p.Rows[0], perftest.ColMsgRate)
	return bw, rate, nil
}

// failure returns the last line of path that contains one of keys (case
// insensitive) when the file ends in the script's "failed" line, else "".
func failure(path string, keys ...string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no output: " + err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if lines[len(lines)-1] != "failed" {
		return ""
	}
	for j := len(lines) - 2; j >= 0; j-- { // the last such line: the error, not a progress line
		for _, k := range keys {
			if strings.Contains(strings.ToLower(lines[j]), strings.ToLower(k)) {
				return strings.TrimSpace(lines[j])
			}
		}
	}
	return "failed"
}

// counters reads "name value" lines (missing file: none).
func counters(path string) map[string]int64 {
	m := map[string]int64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return m
	}
	for _, l := range strings.Split(string(b), "\n") {
		if fs := strings.Fields(l); len(fs) == 2 {
			if v, err := strconv.ParseInt(fs[1], 10, 64); err == nil {
				m[fs[0]] = v
			}
		}
	}
	return m
}
