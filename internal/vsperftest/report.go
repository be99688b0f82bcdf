package vsperftest

// The printed report: the table the docs quote, the per-run figures and
// the ratios with their targets and intervals.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func num(format string, v float64) string {
	if !ok(v) {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}

func (a *analysis) list(key string) string {
	var b strings.Builder
	for _, v := range a.runs[key] {
		b.WriteString(" " + num("%.2f", v))
	}
	return b.String()
}

func (a *analysis) file(name string) string {
	b, err := os.ReadFile(filepath.Join(a.c.dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pow10 writes 10^k for a power of ten above 10, else n.
func pow10(n int64) string {
	k, m := 0, n
	for m >= 10 && m%10 == 0 {
		m /= 10
		k++
	}
	if m == 1 && k > 1 {
		return "10^" + strconv.Itoa(k)
	}
	return strconv.FormatInt(n, 10)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (a *analysis) secs(from, to string) string {
	x, err1 := strconv.ParseInt(a.file(from), 10, 64)
	y, err2 := strconv.ParseInt(a.file(to), 10, 64)
	if errors.Join(err1, err2) != nil {
		return "?"
	}
	return fmt.Sprintf("%d s", y-x)
}

func verdict(v float64, pass func(float64) bool) string {
	if !ok(v) {
		return "n/a"
	}
	if pass(v) {
		return "PASS"
	}
	return "MISS"
}

func (a *analysis) report(w io.Writer) {
	c := a.c
	ptv := ""
	for _, l := range strings.Split(a.file("perftest-version.txt"), "\n") {
		if v, found := strings.CutPrefix(strings.TrimSpace(l), "Version:"); found {
			ptv = strings.TrimSpace(v)
			break
		}
	}
	rbv, _, _ := strings.Cut(a.file("rdmabench-version.txt"), "\n")
	fmt.Fprintln(w, "rdmabench vs perftest, rxe0 (SoftRoCE on lo) in one qemu TCG guest, 2 vCPUs")
	fmt.Fprintf(w, "perftest %s | %s | guest time: lat %s, bw %s, rss %s\n", or(ptv, "?"), or(rbv, "rdmabench ?"),
		a.secs("t0", "t1"), a.secs("t1", "t2"), a.secs("t2", "t3"))
	cs := a.file("clocksource")
	note := ""
	if !strings.HasPrefix(cs, "tsc") {
		note = " (not TSC: clock_gettime is a ~1 us syscall + timer read under TCG; rdmabench times with clock_gettime, perftest with rdtsc)"
	}
	fmt.Fprintf(w, "guest clocksource: %s%s\n", or(cs, "?"), note)
	fmt.Fprintf(w, "Order: each comparison ran %d times per tool back to back, interleaved ABBA BAAB\n", c.reps)
	fmt.Fprintf(w, "(A = perftest; linear drift cancels); figures are the median of each tool's %d runs.\n", c.reps)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-22s %9s %9s %9s | %9s %9s %9s\n", "latency 2 B [usec]", "t_typical", "t_avg", "p99", "p50", "mean", "p99")
	fmt.Fprintf(w, "%-22s %29s | %29s\n", fmt.Sprintf("%d iterations", c.iters), "perftest", "rdmabench")
	for _, op := range []string{"send", "write", "read"} {
		half := "(RTT/2)"
		if op == "read" {
			half = "(RTT)"
		}
		fmt.Fprintf(w, "%-22s %9s %9s %9s | %9s %9s %9s\n", op+" "+half,
			num("%.2f", a.med(op+".pt.typ")), num("%.2f", a.med(op+".pt.avg")), num("%.2f", a.med(op+".pt.p99")),
			num("%.2f", a.med(op+".rb.p50")), num("%.2f", a.med(op+".rb.mean")), num("%.2f", a.med(op+".rb.p99")))
	}
	fmt.Fprintf(w, "%-22s %29s | %29s\n", "inline, 2 B [usec]", "t_typical, -I as rdmabench", "p50, rdmabench's default")
	for _, op := range []string{"send", "write"} {
		fmt.Fprintf(w, "%-22s %29s | %29s\n", op+" (RTT/2)",
			fmt.Sprintf("%s (-I %s, ran %s)", num("%.2f", a.med(op+".ipt.typ")), or(a.notes[op+".irb.inline"], "?"), or(a.notes[op+".ipt.inline"], "?")),
			fmt.Sprintf("%s (inline %s B)", num("%.2f", a.med(op+".irb.p50")), or(a.notes[op+".irb.inline"], "?")))
	}
	bwRow := func(label, pt, rb, k string) {
		fmt.Fprintf(w, "%-22s %29s | %29s\n", label, pt+" "+num("%.2f", a.med(k+".pt")), rb+" "+num("%.2f", a.med(k+".rb")))
	}
	bwRow("WRITE bw 64 KiB [MiB/s]", "ib_write_bw avg", "rdmabench", "bw")
	bwRow("  ... over 4 QPs", "ib_write_bw -q 4", "--qps 4", "bwq")
	bwRow("  ... with rdma_cm", "ib_write_bw -R", "--rdma-cm", "bwcm")
	bwRow("  ... both ways (-b)", "ib_write_bw -b", "-b", "bwb")
	fmt.Fprintf(w, "  (%d s per run, tx depth 128, CQ moderation 100 for both; -b: the sum of both directions in both tools)\n", c.bwdur)
	fmt.Fprintln(w, "per run, in run order (perftest | rdmabench):")
	for _, op := range []string{"send", "write", "read"} {
		fmt.Fprintf(w, "  %-5s t_typical%s | p50%s\n", op, a.list(op+".pt.typ"), a.list(op+".rb.p50"))
	}
	for _, op := range []string{"send", "write"} {
		fmt.Fprintf(w, "  %-5s -I t_typical%s | inline p50%s\n", op, a.list(op+".ipt.typ"), a.list(op+".irb.p50"))
	}
	fmt.Fprintf(w, "  bw    MiB/s%s | MiB/s%s\n", a.list("bw.pt"), a.list("bw.rb"))
	fmt.Fprintf(w, "  bw x4 MiB/s%s | MiB/s%s\n", a.list("bwq.pt"), a.list("bwq.rb"))
	fmt.Fprintf(w, "  bw cm MiB/s%s | MiB/s%s\n", a.list("bwcm.pt"), a.list("bwcm.rb"))
	fmt.Fprintf(w, "  bw -b MiB/s%s | MiB/s%s\n", a.list("bwb.pt"), a.list("bwb.rb"))
	fmt.Fprintf(w, "  bw -b rdmabench client side MiB/s%s, server side MiB/s%s\n", a.list("bwb.rbc"), a.list("bwb.rbs"))
	if n := a.notes["bw_unit"]; n != "" {
		fmt.Fprintf(w, "  (%s)\n", n)
	}
	rs, rl := a.one["rss.small"], a.one["rss.large"]
	bytesOr := func(v float64) string {
		if !ok(v) {
			return "n/a"
		}
		return strconv.FormatInt(int64(v), 10)
	}
	fmt.Fprintf(w, "peak RSS, rdmabench SEND lat: %s it %s MiB (%s B), %s it %s MiB (%s B) [%s]\n",
		pow10(c.rssSmall), num("%.2f", rs/(1<<20)), bytesOr(rs), pow10(c.rssLarge), num("%.2f", rl/(1<<20)), bytesOr(rl), a.notes["rss_src"])
	fmt.Fprintln(w)
	row := func(label string, v float64, target, res, ci string) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-46s %10s  %-10s %-6s %s", label, num("%.3f", v), target, res, ci), " "))
	}
	fmt.Fprintf(w, "%-46s %10s  %-10s %-6s %s\n", "ratio", "value", "target", "result", "95 % interval (bootstrap)")
	for _, op := range []string{"send", "write", "read"} {
		v, ci := a.ratio(op+".rb.p50", op+".pt.typ")
		row(op+": rdmabench p50 / perftest t_typical (no inline)", v, "0.95-1.05", verdict(v, func(x float64) bool { return x >= 0.95 && x <= 1.05 }), ci)
	}
	for _, op := range []string{"send", "write"} {
		v, ci := a.ratio(op+".irb.p50", op+".ipt.typ")
		row(fmt.Sprintf("%s inline: rdmabench default / ib_%s_lat -I", op, op), v, "<= 1.00", verdict(v, func(x float64) bool { return x >= 0 && x <= 1.02 }), ci)
		v, ci = a.ratio(op+".irb.p50", op+".rb.p50")
		row(op+" inline effect: default / --inline-size perftest", v, "info", "", ci)
	}
	ge := func(x float64) bool { return x >= 0.95 }
	for _, r := range []struct{ label, k string }{
		{"bw: rdmabench / ib_write_bw average (MiB/s)", "bw"},
		{"bw 4 QPs: rdmabench / ib_write_bw -q 4", "bwq"},
		{"bw rdma_cm: --rdma-cm / ib_write_bw -R", "bwcm"},
		{"bw both ways: -b / ib_write_bw -b (sums)", "bwb"},
	} {
		v, ci := a.ratio(r.k+".rb", r.k+".pt")
		row(r.label, v, ">= 0.95", verdict(v, ge), ci)
	}
	growth := (rl - rs) / (1 << 20)
	row(fmt.Sprintf("peak RSS growth %s -> %s it (MiB)", pow10(c.rssSmall), pow10(c.rssLarge)), growth, "< 4 MiB",
		verdict(growth, func(x float64) bool { return x < 4 }), "")
	fmt.Fprintln(w)
	nproc := "?"
	if c.nproc > 0 {
		nproc = strconv.Itoa(c.nproc)
	}
	fmt.Fprintf(w, "wall time: %d s (the runs, in one guest); host load avg %s at start, %s at end; %s host CPUs; other qemu guests running at start: %s\n",
		c.hostSecs, c.loadStart, c.loadEnd, nproc, c.others)
}
