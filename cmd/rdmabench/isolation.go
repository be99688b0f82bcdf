package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/isolation"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// isolationLong is the description of 'rdmabench isolation' (its help and
// man page).
var isolationLong = `Measures what a noisy neighbour does to a victim: the victim test (SEND
latency unless --op/-s say otherwise) alone, then beside each attacker of
the catalogue (--attackers, default all: ` + strings.Join(isolation.Names(), ", ") + `),
on the same device and port. Each attacker is extra QPs (or a registration
loop) of the victim's own test, so it runs in loopback and against
'rdmabench server' alike. --repeat rounds (default 3) each run the victim
alone, then beside each attacker in turn, in one session, every test on
fresh QPs.

It reports the victim's p50, p90, p99, p99.9 and p99.99 (n/a where too few
samples back them) and its bandwidth, alone and attacked, as ratios
attacked/alone with intervals (--confidence, 95%) (a bootstrap over the runs with 2 rounds
or more; with one, the percentiles' own intervals), and each attacker's own
achieved rate. The plan (runs, time) is printed before the first run, and
every test is checked against the budgets and device limits first.

--max-inflation p99=2x[,p50=1.5x,bandwidth=0.5x] is the pass/fail rule for CI:
exit 1 when, for any attacker, the interval's lower end lies above a
latency bound (the upper end below the bandwidth floor), naming the
attacker, the figure, the ratio and its interval; exit 9 when none was
crossed but one could not be judged (a percentile n/a, no interval); else 0.
Without HOST both ends run in this process (as loopback); with HOST
against 'rdmabench server' there. The table goes to stdout, the document to
--json (isolation.schema.json). Defaults here: --op send --mode lat, each
run -D 1.`

// isolationRounds is the rounds without --repeat.
const isolationRounds = 3

// cmdIsolation is 'rdmabench isolation [HOST]'.
func cmdIsolation(fs *flag.FlagSet) action {
	var d deviceFlags
	d.add(fs)
	port := fs.IntP("port", "p", spec.DefaultPort, "with HOST: TCP control port of the server")
	keyFile := addKeyFlag(fs, "to prove to the server (with HOST), which must prove it back")
	attackers := fs.String("attackers", "all", "the attackers, comma-separated: "+strings.Join(isolation.Names(), ", ")+" (or all)")
	maxInfl := fs.String("max-inflation", "", "the pass/fail bounds, e.g. p99=2x,p50=1.5x (bandwidth=0.5x: a floor): exit 1 when crossed")
	cpuList := fs.String("cpu", "", "pin threads: the first CPU takes the victim's client thread; in loopback the second takes the server's responder; the rest (or all) take the attackers' threads, e.g. --cpu 0,1,0 (an attacker beside the victim on CPU 0)")
	tf := addTestFlags(fs)
	if f := fs.Lookup("repeat"); f != nil { // the rounds here
		f.Usage = fmt.Sprintf("rounds: each runs the victim alone, then beside each attacker, in one session (1..%d)", isolation.MaxRepeat)
		f.DefValue = strconv.Itoa(isolationRounds)
	}
	jsonPath := fs.String("json", "", "write the isolation document to this file (- for stdout)")
	connTimeout := fs.Duration("connect-timeout", 30*time.Second, "with HOST: give up connecting to the server after this long")
	var bud budgetFlags
	bud.add(fs, false)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 1 {
			return usageError{fmt.Errorf("isolation takes at most one argument, the server's host (got %q)", fs.Args())}
		}
		loopback := fs.NArg() == 0
		if err := checkRunFlags(fs, &d, *port, *tf.loadQPs, *tf.warmup, *jsonPath, "", map[string]time.Duration{"connect-timeout": *connTimeout}); err != nil {
			return err
		}
		if fs.Changed("load-qps") || fs.Changed("load-sweep") {
			return usageError{errors.New("the attackers are the victim's load: drop --load-qps and --load-sweep (choose them with --attackers)")}
		}
		list, err := isolation.Select(*attackers)
		if err != nil {
			return usageError{err}
		}
		var bounds []result.InflationBound
		if *maxInfl != "" {
			if bounds, err = isolation.ParseBounds(*maxInfl); err != nil {
				return usageError{err}
			}
		}
		budget, err := bud.budget()
		if err != nil {
			return err
		}
		if !fs.Changed("op") {
			*tf.ops = result.OpSend
		}
		if !fs.Changed("mode") {
			*tf.modes = result.ModeLat
		}
		if !fs.Changed("iters") && !fs.Changed("duration") {
			*tf.dur = time.Second
		}
		specs, err := tf.specs(fs)
		if err != nil {
			return err
		}
		if len(specs) != 1 {
			return usageError{fmt.Errorf("isolation measures one victim test; --op %s --mode %s -s %s make %d: give one of each", *tf.ops, *tf.modes, *tf.sizes, len(specs))}
		}
		victim := specs[0]
		rounds := isolationRounds // --repeat is the rounds here, each run once
		if fs.Changed("repeat") {
			rounds = max(victim.Repeat, 1)
		}
		if rounds > isolation.MaxRepeat {
			return usageError{fmt.Errorf("--repeat %d out of range 1..%d", rounds, isolation.MaxRepeat)}
		}
		victim.Repeat = 0
		var addr string
		var key []byte
		if !loopback {
			if key, err = loadKey(*keyFile, stderr); err != nil {
				return err
			}
			addr = net.JoinHostPort(fs.Arg(0), strconv.Itoa(*port))
		}
		cpus, err := device.PlanCPUs(*cpuList, loopback)
		if err != nil {
			return usageError{err}
		}
		rc := bench.RunConfig{Client: bench.ClientConfig{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, RDMACM: *tf.rdmaCM, AuthKey: key,
			Run: measure.Options{CPU: cpus.Client, LoadCPUs: cpus.Load, Out: io.Discard}}, ServerCPUs: cpus.Server, ConnTimeout: *connTimeout, CommandLine: os.Args}
		device := d.device
		run := isolation.LoopbackRunner(rc, &device)
		if !loopback {
			run = isolation.ClientRunner(addr, rc, &device)
		}
		check := func(specs []spec.Spec) error { return rc.Client.CheckAhead(specs, budget, loopback) }
		cfg := isolation.Config{Victim: victim, Attackers: list, Repeat: rounds, Confidence: victim.Confidence, Check: check, Run: run, Bounds: bounds,
			Progress: stderr, Role: "loopback", CommandLine: os.Args, ToolVersion: version.String()}
		if !loopback {
			cfg.Role, cfg.Peer = "client", addr
		}
		doc, err := isolation.Run(ctx, cfg)
		if doc == nil { // refused before any run: a value out of range is a usage error
			if err != nil && exitCode(err) == exitFail {
				err = usageError{err}
			}
			return err
		}
		doc.Device = device
		err = endedEarly(ctx, err)
		return writeDocument(*jsonPath, err, func() error { return isolation.WriteReport(stdout, doc) },
			func(path string) error { return result.WriteIsolationJSON(path, doc) })
	}
}
