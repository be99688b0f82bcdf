package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/cliffs"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// cliffsLong is the description of 'rdmabench cliffs' (its help and man page).
const cliffsLong = `Finds where performance falls off along one axis of one test: the QPs (-q),
the message size (-s; odd sizes such as 129 and 257 B with --points), the
send queue depth (-t), the outstanding reads (-o), the MRs the operations
spread over (--mrs), the target region (--region, with --access) or the
SGEs per work request (--sge), or the idle QPs beside the measured ones
(--qps-idle). It measures a
geometric ladder (--from, --to, --factor, or --points), then bisects inside
each ladder step where the figure fell (--bisect steps, for the first two
falls), each point --runs times on fresh QPs, and reports each knee: the
axis values either side, the figure before and after, and the drop with its
bootstrap interval ("mpps -47% between 256 and 512 QPs, 95% interval ..."),
or "no knee up to N"; and the port counters whose rate per operation moved
across the knee. A knee is a step of the median worse by --min-drop or more
whose interval lies above half of it.

The figure (--figure) is the message rate (mpps) for bandwidth tests and
p50 for latency tests. Before the first point it prints the plan (points,
runs, the time), and it refuses the search, naming the point and the
limit, when a point would exceed rdmabench's limits, the device's (max_qp,
max_qp_wr, max_mr_size, ...) or the memory budget (--max-memory). Without
HOST both ends run in this process (as loopback); with HOST against
'rdmabench server' there. The table goes to stdout, the document to --json
(cliffs.schema.json), and 'rdmabench plot FILE --kind cliffs' draws it.
Defaults here: --op write (read for outstanding-reads), --mode bw, -s 64
(except along size), each run -D 1.`

// cmdCliffs is 'rdmabench cliffs [HOST]'.
func cmdCliffs(fs *flag.FlagSet) action {
	var d deviceFlags
	d.add(fs)
	port := fs.IntP("port", "p", spec.DefaultPort, "with HOST: TCP control port of the server")
	keyFile := addKeyFlag(fs, "to prove to the server (with HOST), which must prove it back")
	axis := fs.String("axis", "", "the axis searched: "+cliffs.AxisArgs()+" (required)")
	from := fs.String("from", "", "the ladder's first value (default: "+cliffsDefaults(func(a cliffs.Axis) int { return a.From })+"; sizes take K, M)")
	to := fs.String("to", "", "the ladder's last value (default: "+cliffsDefaults(func(a cliffs.Axis) int { return a.To })+")")
	factor := fs.Float64("factor", 2, "the ladder's ratio of one value to the last, (1, 16]")
	points := fs.String("points", "", "the ladder as a list instead, e.g. 64,128,129,256,257,4K (sizes take K, M)")
	runs := fs.Int("runs", cliffs.DefaultRuns, fmt.Sprintf("runs a point, each on fresh QPs, 1..%d: each point's interval", spec.MaxRepeat))
	bisect := fs.Int("bisect", cliffs.DefaultMaxBisections, "bisection steps inside each ladder step where the figure fell (the first two falls), 0..20")
	figure := fs.String("figure", "", "the figure judged: mpps or bw_mb_per_s (bandwidth tests), p50, p99, mean, ... (default: mpps for bw, p50 for lat)")
	minDrop := fs.String("min-drop", "20%", "the worsening of the median that is a knee, e.g. 20% or 0.2")
	tf := addTestFlags(fs)
	jsonPath := fs.String("json", "", "write the cliffs document to this file (- for stdout)")
	connTimeout := fs.Duration("connect-timeout", 30*time.Second, "with HOST: give up connecting to the server after this long")
	var bud budgetFlags
	bud.add(fs, false)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 1 {
			return usageError{fmt.Errorf("cliffs takes at most one argument, the server's host (got %q)", fs.Args())}
		}
		loopback := fs.NArg() == 0
		if err := checkRunFlags(fs, &d, *port, *tf.loadQPs, *tf.warmup, *jsonPath, "", map[string]time.Duration{"connect-timeout": *connTimeout}); err != nil {
			return err
		}
		if *axis == "" {
			return usageError{errors.New("cliffs needs --axis: " + cliffs.AxisArgs())}
		}
		ax, err := cliffs.ParseAxis(*axis)
		if err != nil {
			return usageError{err}
		}
		if fs.Changed(ax.Flag) {
			return usageError{fmt.Errorf("--%s is the axis searched (--axis %s): give its values with --from/--to or --points", ax.Flag, *axis)}
		}
		ladder, err := cliffsLadder(fs, ax, *from, *to, *factor, *points)
		if err != nil {
			return usageError{err}
		}
		drop, err := parseFraction("min-drop", *minDrop)
		if err != nil {
			return usageError{err}
		}
		budget, err := bud.budget()
		if err != nil {
			return err
		}
		// the search's test where the flags say nothing
		if !fs.Changed("op") {
			*tf.ops = ax.DefaultOp()
		}
		if !fs.Changed("mode") {
			*tf.modes = cliffs.DefaultMode
		}
		if !fs.Changed("iters") && !fs.Changed("duration") {
			*tf.dur = cliffs.DefaultDuration
		}
		if !fs.Changed("size") && ax.Name != cliffs.AxisSize {
			*tf.sizes = strconv.Itoa(cliffs.DefaultSize)
		}
		plan, planErr := tf.plan(fs)
		specAt := func(v int) (spec.Spec, error) {
			if planErr != nil { // named with the first point, as a test the flags cannot make
				return spec.Spec{}, planErr
			}
			return ax.SpecAt(plan, v)
		}
		var addr string
		var key []byte
		if !loopback {
			if key, err = loadKey(*keyFile, stderr); err != nil {
				return err
			}
			addr = net.JoinHostPort(fs.Arg(0), strconv.Itoa(*port))
		}
		rc := bench.RunConfig{Client: bench.ClientConfig{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, RDMACM: *tf.rdmaCM, AuthKey: key,
			Run: measure.Options{CPU: -1, Out: io.Discard}}, ConnTimeout: *connTimeout, CommandLine: os.Args}
		device := d.device
		run := cliffs.LoopbackRunner(rc, &device)
		if !loopback {
			run = cliffs.ClientRunner(addr, rc, &device)
		}
		check := func(specs []spec.Spec) error { return rc.Client.CheckAhead(specs, budget, loopback) }
		cfg := cliffs.Config{Axis: ax.Name, Ladder: ladder, SpecAt: specAt, Check: check, Run: run, Runs: *runs, MaxBisections: *bisect,
			Figure: *figure, MinDrop: drop, Progress: stderr, Terminal: isTerminal(stderr),
			Role: "loopback", CommandLine: os.Args, ToolVersion: version.String()}
		if !loopback {
			cfg.Role, cfg.Peer = "client", addr
		}
		if *runs < 1 || *runs > spec.MaxRepeat {
			return usageError{fmt.Errorf("--runs %d out of range 1..%d", *runs, spec.MaxRepeat)}
		}
		if *bisect < 0 || *bisect > 20 {
			return usageError{fmt.Errorf("--bisect %d out of range 0..20", *bisect)}
		}
		doc, err := cliffs.Search(ctx, cfg)
		if doc == nil { // refused before any point ran: a value out of range is a usage error
			if err != nil && exitCode(err) == exitFail {
				err = usageError{err}
			}
			return err
		}
		doc.Device = device
		err = endedEarly(ctx, err)
		return writeDocument(*jsonPath, err, func() error { return cliffs.WriteReport(stdout, doc) },
			func(path string) error { return result.WriteCliffsJSON(path, doc) })
	}
}

// cliffsLadder is the ladder the flags give: --points, or --from..--to
// ×--factor with the axis' defaults.
func cliffsLadder(fs *flag.FlagSet, axis cliffs.Axis, from, to string, factor float64, points string) ([]int, error) {
	if points != "" {
		if fs.Changed("from") || fs.Changed("to") || fs.Changed("factor") {
			return nil, errors.New("--points is the whole ladder: drop --from, --to and --factor")
		}
		vs, err := spec.ParseSizes(points)
		if err != nil {
			return nil, fmt.Errorf("--points: %w", err)
		}
		vs = slices.Clone(vs)
		return vs, cliffs.CheckPoints(vs)
	}
	lo, hi := axis.From, axis.To
	for _, f := range []struct {
		name, v string
		out     *int
	}{{"from", from, &lo}, {"to", to, &hi}} {
		if f.v == "" {
			continue
		}
		n, err := spec.ParseSize(f.v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", f.name, err)
		}
		*f.out = n
	}
	return cliffs.Ladder(lo, hi, factor)
}

// cliffsDefaults lists each axis' default first or last value, as --from
// and --to take it: "qps 1, size 64, ...".
func cliffsDefaults(v func(cliffs.Axis) int) string {
	var out []string
	for _, a := range cliffs.AxisTable {
		out = append(out, a.Arg()+" "+a.Format(v(a)))
	}
	return strings.Join(out, ", ")
}

// parseFraction reads "20%" or "0.2" as a fraction in (0, 1).
func parseFraction(name, s string) (float64, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err == nil && pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("--%s %q: want a fraction between 0 and 100%%, such as 20%%", name, s)
	}
	return v, nil
}
