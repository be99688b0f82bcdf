// Package vsperftest is the analysis of make bench's comparison with perftest
// (TestBenchVsPerftest in internal/e2e/exp; scripts/vsperftest re-reads a
// kept directory): it reads the guest's outputs (rdmabench's result documents NAME.json and
// perftest's printed output NAME.txt, imported by bench/perftest as
// `rdmabench import perftest` does), takes each tool's median over its
// runs, and prints the figures, the ratios with their targets and a 95 %
// bootstrap interval for each ratio of medians (runs resampled with
// replacement within each tool, bench/compare). Pure Go: documents and
// text only. Exit 1 when a run failed or a figure is missing.
package vsperftest

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Config is what the run knows and its files do not.
type Config struct {
	Dir                string // the guest's output directory
	Iters, BWDur, Reps int    // latency iterations, bandwidth seconds, runs per tool
	RSSSmall, RSSLarge int64  // iterations of the two RSS runs
	GuestRC            int    // the guest run's exit status (0: it completed)
	Resamples          int    // bootstrap resamples per ratio
	HostSecs, NProc    int    // wall time of the whole run, s; host CPUs (0: unknown)
	LoadStart, LoadEnd string // host load averages ("?": unknown)
	Others             string // other qemu guests running at the start ("?": unknown)
	Prog               string // the name in error lines
}

// config is the analysis's copy of Config.
type config struct {
	dir                string
	iters, bwdur, reps int
	rssSmall, rssLarge int64
	vmrc               int
	resamples          int
	hostSecs, nproc    int
	loadStart, loadEnd string
	others             string
	prog               string
}

// Run reads the outputs in c.Dir, prints the report to stdout and each
// problem to stderr, and returns the number of problems (a run that failed,
// a figure missing); with problems it ends with a line that counts them.
func Run(c Config, stdout, stderr io.Writer) int {
	if c.Resamples == 0 {
		c.Resamples = 10000
	}
	if c.Prog == "" {
		c.Prog = "vsperftest"
	}
	a := newAnalysis(config{dir: c.Dir, iters: c.Iters, bwdur: c.BWDur, reps: c.Reps, rssSmall: c.RSSSmall, rssLarge: c.RSSLarge,
		vmrc: c.GuestRC, resamples: c.Resamples, hostSecs: c.HostSecs, nproc: c.NProc, loadStart: c.LoadStart, loadEnd: c.LoadEnd,
		others: c.Others, prog: c.Prog}, stderr)
	a.read()
	a.report(stdout)
	if len(a.problems) > 0 {
		fmt.Fprintf(stderr, "%s: %d problem(s): some runs failed or numbers could not be parsed (see above)\n", c.Prog, len(a.problems))
	}
	return len(a.problems)
}

// na is a missing figure.
var na = math.NaN()

func ok(v float64) bool { return !math.IsNaN(v) }

// analysis holds the figures: per run (in run order) and medians, by key.
type analysis struct {
	c        config
	errw     io.Writer
	problems []string
	runs     map[string][]float64 // key -> one value per run (NaN: missing)
	one      map[string]float64   // single figures
	notes    map[string]string
}

func newAnalysis(c config, errw io.Writer) *analysis {
	return &analysis{c: c, errw: errw, runs: map[string][]float64{}, one: map[string]float64{}, notes: map[string]string{}}
}

func (a *analysis) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(a.errw, "%s: error: %s\n", a.c.prog, msg)
	a.problems = append(a.problems, msg)
}

func (a *analysis) warn(format string, args ...any) {
	fmt.Fprintf(a.errw, "%s: warning: %s\n", a.c.prog, fmt.Sprintf(format, args...))
}

// rb reads rdmabench's document NAME.json (nil and a problem when it
// cannot).
func (a *analysis) rb(name string) *result.Document {
	p := filepath.Join(a.c.dir, name+".json")
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		a.problem("%s.json missing", name)
		return nil
	}
	doc, err := result.ReadJSONFile(p)
	if err != nil {
		a.problem("%s.json: cannot parse: %v", name, err)
		return nil
	}
	if len(doc.Results) == 0 {
		a.problem("%s.json: no result", name)
		return nil
	}
	return doc
}

// pt reads perftest's output NAME.txt as `rdmabench import perftest` does.
func (a *analysis) pt(name string) *result.Document {
	p := filepath.Join(a.c.dir, name+".txt")
	b, err := os.ReadFile(p)
	if err != nil {
		a.problem("%s.txt: %v", name, err)
		return nil
	}
	pr, err := perftest.ParsePrinted(b)
	if err == nil {
		var doc *result.Document
		if doc, err = perftest.Import(pr, name+".txt", perftest.ImportOptions{}); err == nil {
			return doc
		}
	}
	a.problem("%s.txt: %v", name, err)
	return nil
}

func (a *analysis) add(key string, v float64) { a.runs[key] = append(a.runs[key], v) }

func nsToUS(n result.Nanos) float64 {
	if !n.OK {
		return na
	}
	return n.NS / 1000
}

func (a *analysis) read() {
	a.readStatus()
	c := a.c
	for _, op := range []string{"send", "write", "read"} {
		for r := 1; r <= c.reps; r++ {
			pt, rb := a.pt(fmt.Sprintf("lat-%s-pt%d", op, r)), a.rb(fmt.Sprintf("lat-%s-rb%d", op, r))
			typ, avg, p99 := na, na, na
			if pt != nil {
				x := pt.Results[0]
				typ, avg, p99 = nsToUS(x.Latency.P50), x.Latency.Mean/1000, nsToUS(x.Latency.P99)
				if x.Iterations != int64(c.iters) {
					a.problem("lat-%s-pt%d: %d iterations, wanted %d", op, r, x.Iterations, c.iters)
				}
			}
			p50, mean, rp99 := na, na, na
			if rb != nil {
				x := rb.Results[0]
				p50, mean, rp99 = nsToUS(x.Latency.P50), x.Latency.Mean/1000, nsToUS(x.Latency.P99)
				if x.Iterations != int64(c.iters) {
					a.problem("lat-%s-rb%d: %d iterations, wanted %d", op, r, x.Iterations, c.iters)
				}
			}
			a.add(op+".pt.typ", typ)
			a.add(op+".pt.avg", avg)
			a.add(op+".pt.p99", p99)
			a.add(op+".rb.p50", p50)
			a.add(op+".rb.mean", mean)
			a.add(op+".rb.p99", rp99)
		}
	}
	for _, op := range []string{"send", "write"} {
		for r := 1; r <= c.reps; r++ {
			pt, rb := a.pt(fmt.Sprintf("ilat-%s-pt%d", op, r)), a.rb(fmt.Sprintf("ilat-%s-rb%d", op, r))
			typ, p50 := na, na
			if pt != nil {
				typ = nsToUS(pt.Results[0].Latency.P50)
				a.notes[op+".ipt.inline"] = strconv.Itoa(pt.Results[0].Inline)
			}
			if rb != nil {
				p50 = nsToUS(rb.Results[0].Latency.P50)
				a.notes[op+".irb.inline"] = strconv.Itoa(rb.Results[0].Inline)
			}
			a.add(op+".ipt.typ", typ)
			a.add(op+".irb.p50", p50)
		}
	}
	a.readBW()
	a.readRSS()
}

// readStatus: every run must have run and exited 0.
func (a *analysis) readStatus() {
	b, err := os.ReadFile(filepath.Join(a.c.dir, "status"))
	if err != nil {
		a.problem("no status file: %v", err)
	}
	ran := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		ran[f[0]] = true
		if f[1] != "0" {
			a.problem("run %s failed (exit %s); see its output NAME.txt in the output directory", f[0], f[1])
		}
	}
	needs := []string{"rss-small", "rss-large"}
	for r := 1; r <= a.c.reps; r++ {
		for _, t := range []string{"pt", "rb"} {
			needs = append(needs, fmt.Sprintf("lat-send-%s%d", t, r), fmt.Sprintf("lat-write-%s%d", t, r), fmt.Sprintf("lat-read-%s%d", t, r), fmt.Sprintf("bw-%s%d", t, r))
		}
	}
	for _, n := range needs {
		if !ran[n] {
			a.problem("run %s never ran (guest stopped early?)", n)
		}
	}
	if a.c.vmrc != 0 {
		a.problem("the guest run exited %d", a.c.vmrc)
	}
}

// mbUnit says what perftest's "MB/sec" was, from MsgRate × size: its
// bandwidth as imported (MiB/s when perftest divided by 2^20) matches
// MsgRate × size in MiB/s, or in 10^6 bytes/s.
func mbUnit(r result.Result) string {
	avg, size := r.Bandwidth.MiBPerSec, float64(r.SizeBytes)
	mib, mb := r.Bandwidth.Mpps*size*1e6/(1<<20), r.Bandwidth.Mpps*size
	di, dm := math.Abs(avg-mib)/avg, math.Abs(avg-mb)/avg
	switch {
	case di < 0.02 && di < dm:
		return "MiB"
	case dm < 0.02:
		return "MB"
	}
	return "?"
}

func (a *analysis) readBW() {
	c := a.c
	unit := ""
	for r := 1; r <= c.reps; r++ {
		name := fmt.Sprintf("bw-pt%d", r)
		v := na
		if pt := a.pt(name); pt != nil {
			x := pt.Results[0]
			switch {
			case x.Iterations == 0:
				// seen under host contention with a short -D: perftest's margin is duration/4 (integer)
				a.problem("%s: ib_write_bw measured 0 iterations (try a longer --bw-duration)", name)
			default:
				switch u := mbUnit(x); u {
				case "MiB":
					v, unit = x.Bandwidth.MiBPerSec, u
				case "MB":
					v, unit = x.Bandwidth.MiBPerSec*1e6/(1<<20), u
				default:
					a.problem("%s: BW average %.2f matches neither MsgRate x size in MiB/s (%.6f) nor MB/s (%.6f)", name,
						x.Bandwidth.MiBPerSec, x.Bandwidth.Mpps*float64(x.SizeBytes)*1e6/(1<<20), x.Bandwidth.Mpps*float64(x.SizeBytes))
				}
			}
			if x.TxDepth != 128 || x.CQMod != 100 {
				a.warn("%s ran with tx depth '%d' and CQ moderation '%d', not 128/100", name, x.TxDepth, x.CQMod)
			}
		}
		a.add("bw.pt", v)
		v = na
		if rb := a.rb(fmt.Sprintf("bw-rb%d", r)); rb != nil {
			x := rb.Results[0]
			v = x.Bandwidth.MiBPerSec
			if x.TxDepth != 128 || x.CQMod != 100 {
				a.warn("bw-rb%d ran with tx depth '%d' and CQ moderation '%d', not 128/100", r, x.TxDepth, x.CQMod)
			}
		}
		a.add("bw.rb", v)
	}
	if unit != "" {
		a.notes["bw_unit"] = "perftest 'MB/sec' checked against MsgRate x size: it is " + unit + "/s"
	}
	// 4 QPs, rdma_cm and both ways: the same unit as the single-QP runs;
	// ib_write_bw -b prints the sum of both sides' averages
	flag := map[string]string{"bwq": "-q 4", "bwcm": "-R", "bwb": "-b"}
	for _, k := range []string{"bwq", "bwcm", "bwb"} {
		for r := 1; r <= c.reps; r++ {
			v := na
			if pt := a.pt(fmt.Sprintf("%s-pt%d", k, r)); pt != nil {
				v = pt.Results[0].Bandwidth.MiBPerSec
				if unit == "MB" {
					v = v * 1e6 / (1 << 20)
				}
			} else {
				a.problem("%s-pt%d: no BW average from ib_write_bw (%s)", k, r, flag[k])
			}
			a.add(k+".pt", v)
			v = na
			cs, ss := na, na
			if rb := a.rb(fmt.Sprintf("%s-rb%d", k, r)); rb != nil {
				x := rb.Results[0]
				v = x.Bandwidth.MiBPerSec
				if x.Sides != nil {
					cs, ss = x.Sides.Client.Bandwidth.MiBPerSec, x.Sides.Server.Bandwidth.MiBPerSec
				}
			}
			a.add(k+".rb", v)
			if k == "bwb" { // rdmabench's two sides, for the record
				a.add("bwb.rbc", cs)
				a.add("bwb.rbs", ss)
			}
		}
	}
}

func (a *analysis) readRSS() {
	a.notes["rss_src"] = "peak_rss_bytes"
	for _, s := range []string{"small", "large"} {
		v := na
		if doc, err := result.ReadJSONFile(filepath.Join(a.c.dir, "rss-"+s+".json")); err == nil && doc.PeakRSSBytes > 0 {
			v = float64(doc.PeakRSSBytes)
		} else if b, err := os.ReadFile(filepath.Join(a.c.dir, "rss-"+s+".vmhwm_kb")); err == nil {
			if kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && kb > 0 {
				v = float64(kb * 1024)
				a.notes["rss_src"] = "VmHWM polled every 0.2 s, a lower bound (no peak_rss_bytes)"
			}
		}
		if !ok(v) {
			a.problem("rss-%s: no peak RSS (neither peak_rss_bytes nor VmHWM)", s)
		}
		a.one["rss."+s] = v
	}
}

// med is the median of key's present runs (NaN: none).
func (a *analysis) med(key string) float64 {
	vs := present(a.runs[key])
	if len(vs) == 0 {
		return na
	}
	// to 6 decimals, so that a median halfway between two printed figures
	// rounds as the printed decimal would (523.065, not 523.06499...)
	return math.Round(compare.MedianOf(vs)*1e6) / 1e6
}

func present(vs []float64) []float64 {
	var out []float64
	for _, v := range vs {
		if ok(v) {
			out = append(out, v)
		}
	}
	return out
}

// ratio is median(a)/median(b) and its bootstrap interval, as text.
func (a *analysis) ratio(ka, kb string) (float64, string) {
	ma, mb := a.med(ka), a.med(kb)
	if !ok(ma) || !ok(mb) || mb == 0 {
		return na, "n/a"
	}
	lo, hi, good := compare.MedianRatioInterval([]compare.RatioGroup{{A: present(a.runs[ka]), B: present(a.runs[kb])}}, a.c.resamples, 0.95)
	if !good {
		return ma / mb, "n/a"
	}
	return ma / mb, fmt.Sprintf("%.3f-%.3f", lo, hi)
}
