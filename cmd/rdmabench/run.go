package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"golang.org/x/sys/unix"
)

// cmdRun is 'rdmabench run' and, with loopback, 'rdmabench loopback'.
func cmdRun(fs *flag.FlagSet, loopback bool) action {
	var d deviceFlags
	d.add(fs)
	port, keyFile := new(int), new(string)
	if !loopback {
		port = fs.IntP("port", "p", spec.DefaultPort, "TCP control port of the server")
		keyFile = addKeyFlag(fs, "to prove to the server, which must prove it back")
	}
	tf := addTestFlags(fs)
	ef := addExpectFlags(fs)
	ptf := addPerftestFlags(fs)
	reportBoth := fs.Bool("report-both", false, "with -b: also print each side's figures (bytes, messages, bandwidth, message rate) under the sum (perftest --report-both)")
	cpuList := fs.String("cpu", "", "pin threads: the first CPU takes the client's engine thread; in loopback the second takes the server's responder; the rest (or all) take load QP threads, e.g. --cpu 0 or --cpu 0,1,2-3")
	interval := fs.Duration("interval", 0, "print interval lines this often (default: 1s in duration mode)")
	unit := fs.String("unit", result.UnitMiB, "bandwidth unit of the table: MiB (MiB/sec, perftest's), MB (10^6 B/s), Gb (Gb/sec)")
	wide := addWideFlag(fs)
	jsonPath := fs.String("json", "", "write the whole result document to this file (- for stdout)")
	hlogPath := fs.String("hlog", "", "write HdrHistogram interval logs (one histogram per second, tagged per test) to this .hlog file")
	hgrmPrefix := fs.String("hgrm", "", "write one HdrHistogram percentile file per test: PREFIX-<op>-<mode>-<size>B.hgrm (values in usec)")
	connTimeout := fs.Duration("connect-timeout", 30*time.Second, "give up connecting to the server after this long")
	runTimeout := fs.Duration("run-timeout", 0, "bound the whole run (all tests): on expiry abort the running test, keep the finished results "+
		"(JSON \"partial\": true) and exit 7 (default: no bound)")
	var nf numaFlags
	nf.add(fs, "the engine threads")
	var bud budgetFlags
	bud.add(fs, false)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if err := ptf.apply(fs, tf, unit, jsonPath); err != nil {
			return err
		}
		if err := checkRunFlags(fs, &d, *port, *tf.loadQPs, *tf.warmup, *jsonPath, *hgrmPrefix, map[string]time.Duration{
			"connect-timeout": *connTimeout, "interval": *interval}); err != nil {
			return err
		}
		budget, err := bud.budget()
		if err != nil {
			return err
		}
		numaChoice, err := nf.choice(fs)
		if err != nil {
			return err
		}
		var addr string
		var key []byte
		if !loopback {
			if key, err = loadKey(*keyFile, stderr); err != nil {
				return err
			}
			if fs.NArg() != 1 {
				return usageError{fmt.Errorf("run needs the server's host name or address (got %d arguments)", fs.NArg())}
			}
			addr = net.JoinHostPort(fs.Arg(0), strconv.Itoa(*port))
		} else if fs.NArg() != 0 {
			return usageError{fmt.Errorf("loopback takes no arguments (got %q)", fs.Args())}
		}
		if *reportBoth && !*tf.bidir {
			return usageError{fmt.Errorf("--report-both reports the two sides of a bidirectional test: add -b")}
		}
		if err := checkUnit(*unit); err != nil {
			return err
		}
		specs, err := tf.specs(fs)
		if err != nil {
			return err
		}
		exp, err := ef.parse(specs)
		if err != nil {
			return err
		}
		if err := endpoint.CheckBudget(specs, budget, loopback); err != nil { // before anything is mapped: exit 3
			return err
		}
		cpus, err := device.PlanCPUs(*cpuList, loopback)
		if err != nil {
			return usageError{err}
		}
		intervalOut := stdout
		if *jsonPath == "-" { // keep stdout pure JSON
			intervalOut = stderr
		}
		cfg := bench.RunConfig{
			Client: bench.ClientConfig{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, Transport: *tf.transport, RDMACM: *tf.rdmaCM, AuthKey: key, NUMA: numaChoice,
				Run: measure.Options{CPU: cpus.Client, LoadCPUs: cpus.Load, Interval: *interval, Out: intervalOut, Unit: *unit}},
			ServerCPUs: cpus.Server,
			Specs:      specs, ConnTimeout: *connTimeout, Progress: stderr, CommandLine: os.Args,
		}
		if isTerminal(stderr) {
			cfg.Client.Run.Progress = stderr
		}
		if *hlogPath != "" {
			f, err := os.Create(*hlogPath)
			if err != nil {
				return usageError{err}
			}
			defer f.Close()
			if cfg.Client.Run.HLog, err = hist.NewLogWriter(f, time.Now()); err != nil {
				return err
			}
		}
		if *runTimeout < 0 {
			return usageError{fmt.Errorf("--run-timeout %v: must be positive (0: no bound)", *runTimeout)}
		}
		ctx, cancel := withRunTimeout(ctx, *runTimeout)
		defer cancel()
		devices := strings.Split(d.device, ",")
		if len(devices) > 1 && *jsonPath == "-" {
			return usageError{fmt.Errorf("--json - with %d devices (-d %s): one document per device needs a file name", len(devices), d.device)}
		}
		var docs []*result.Document
		var verdicts []expect.Verdict
		for _, dev := range devices {
			cfg.Client.Device = strings.TrimSpace(dev)
			var doc *result.Document
			if loopback {
				doc, err = bench.RunLoopback(ctx, cfg, log.New(io.Discard, "", 0))
			} else {
				doc, err = bench.RunClient(ctx, addr, cfg)
			}
			if errors.Is(err, endpoint.ErrNoHugePages) {
				err = envError{err} // exit 3, as for rdmabench mr
			}
			err = endedEarly(ctx, err) // a signal or --run-timeout: say so, and exit with its code
			if doc != nil {
				o := report.Options{Unit: *unit, Sides: *reportBoth, CI: *tf.stats.ci, Width: tableWidth(*wide)}
				if werr := printReport(doc, stdout, devicePath(*jsonPath, cfg.Client.Device, len(devices)), o); werr != nil && err == nil {
					err = werr
				}
				if *ptf.histogram && *jsonPath != "-" {
					if werr := writeHistograms(stdout, doc); werr != nil && err == nil {
						err = werr
					}
				}
				if *hgrmPrefix != "" {
					if werr := writeHGRM(doc, devicePath(*hgrmPrefix, cfg.Client.Device, len(devices))); werr != nil && err == nil {
						err = werr
					}
				}
				docs = append(docs, doc)
			}
			if err != nil {
				return err
			}
			verdicts = append(verdicts, expect.Judge(doc, exp)...)
		}
		if len(docs) > 1 { // the fabric comparison: one column per device
			fmt.Fprintln(stdout)
			if err := compare.Compare(docs, devices).WriteTable(stdout, nil, *unit, tableWidth(*wide)); err != nil {
				return err
			}
		}
		if err := expect.Write(intervalOut, verdicts); err != nil {
			return err
		}
		return expect.Outcome(verdicts)
	}
}

// devicePath inserts the device into path when a run sweeps n > 1 devices
// (-d a,b): "out.json" becomes "out-a.json"; "" stays "".
func devicePath(path, dev string, n int) string {
	if n < 2 || path == "" || path == "-" {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + dev + ext
}

// writeHGRM writes each result's histogram as an .hgrm percentile table in
// microseconds of the reported latency (RTT/2 where the test reports it).
func writeHGRM(doc *result.Document, prefix string) error {
	for _, r := range doc.Results {
		h, err := r.DecodeHistogram()
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%s-%s-%s-%dB.hgrm", prefix, r.Op, r.Mode, r.SizeBytes)
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		div := r.HistogramDivisor
		if div <= 0 {
			div = 1
		}
		err = h.WriteHGRM(f, 1000*div)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// isTerminal reports whether w is a terminal that can redraw a line
// (progress lines go only there; TERM unset or "dumb" counts as no).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// printReport writes doc's header and tables as o says (unless jsonPath
// is "-") and its JSON (jsonPath).
func printReport(doc *result.Document, w io.Writer, jsonPath string, o report.Options) error {
	if jsonPath != "-" {
		if err := report.WriteDocument(w, doc, o); err != nil {
			return err
		}
	}
	if jsonPath != "" {
		return result.WriteJSONFile(jsonPath, doc)
	}
	return nil
}

// parseInline reads --inline-size: "auto", "perftest" or a size in bytes.
func parseInline(v string) (policy string, size int, err error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto":
		return spec.InlineAuto, 0, nil
	case "perftest":
		return spec.InlinePerftest, 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > spec.MaxInline {
		return "", 0, fmt.Errorf("--inline-size %q: want auto, perftest or a size of 0..%d bytes", v, spec.MaxInline)
	}
	return spec.InlineSize, n, nil
}
