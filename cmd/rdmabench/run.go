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
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
	"golang.org/x/sys/unix"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer, loopback bool) error {
	name := "run"
	if loopback {
		name = "loopback"
	}
	fs := newFlags(name)
	var d deviceFlags
	d.add(fs)
	port := new(int)
	if !loopback {
		port = fs.IntP("port", "p", bench.DefaultPort, "TCP control port of the server")
	}
	ops := fs.String("op", "send,write,read", "operations: send, write, read, fetch_add, cmp_swap, or all")
	modes := fs.String("mode", "lat,bw", "modes: lat (ping-pong latency), bw (streaming bandwidth)")
	sizes := fs.StringP("size", "s", "", "message sizes: list and power-of-two ranges, e.g. 2,64,4K,1M or 2-8M (default: 2 for lat, 64K for bw)")
	iters := fs.Int64P("iters", "n", 0, "measured iterations per test (default: 10000 lat, 5000 bw)")
	dur := fs.DurationP("duration", "D", 0, "measure each test for this long instead of a count, e.g. 10s")
	warmup := fs.Int64("warmup", -1, "warm-up iterations before measuring (default: 1% of iterations, at least 100, for lat; tx depth for bw)")
	warmupTime := fs.Duration("warmup-time", 0, "warm up for this long instead of a count, e.g. 500ms")
	tx := fs.IntP("tx-depth", "t", 0, "outstanding sends in bw mode (default 128)")
	cqmod := fs.IntP("cq-mod", "Q", 0, "signal one completion every N sends in bw mode (default min(100, tx depth))")
	rx := fs.IntP("rx-depth", "r", 0, "receives kept posted (default 512)")
	inline := fs.StringP("inline-size", "I", "auto", "inline data: auto (latency SEND/WRITE up to what the device grants, capped at perftest's 236/220/188 B; "+
		"none in bandwidth tests), perftest (perftest's exact rules: 0 on devices it does not recognise, such as rxe and siw), or a size in bytes")
	qpTimeout := fs.IntP("qp-timeout", "u", bench.DefaultQPTimeout, "RC ACK timeout exponent: 4.096 µs × 2^N per try, 1..31 (perftest -u)")
	retryCount := fs.Int("retry-count", bench.DefaultRetryCount, "RC transport retries before the QP fails, 1..7")
	rnrRetry := fs.Int("rnr-retry", bench.DefaultRNRRetry, "receiver-not-ready retries, 1..7 (7: retry forever)")
	outReads := fs.IntP("outstanding-reads", "o", 0, "READ/atomic operations in flight per QP, max_rd_atomic (default: the device's max_qp_rd_atom for READ and atomics, as perftest -o)")
	postList := fs.IntP("post-list", "l", 0, "bw: chain this many work requests per ibv_post_send (perftest -l)")
	event := fs.BoolP("event", "e", false, "sleep on completion channels (interrupts) instead of busy polling (perftest -e)")
	mtu := fs.IntP("mtu", "m", 0, "path MTU, bytes (default: the smaller active MTU of both ports)")
	rate := fs.Float64("rate", 0, "open-loop latency: send this many operations per second and time each from its intended send time, e.g. --rate 2000")
	schedule := fs.String("schedule", result.ScheduleConstant, "open-loop schedule: constant or poisson")
	transport := fs.String("transport", result.TransportRDMA, "data path: rdma, or tcp (kernel TCP baseline: send lat and bw; needs no RDMA device)")
	sl := fs.IntP("sl", "S", 0, "service level of the QPs, 0..15")
	tclass := fs.Int("tclass", 0, "GRH traffic class of the QPs, 0..255 (RoCE: DSCP << 2 | ECN)")
	qpType := fs.String("qp-type", "rc", "queue pair type: rc, uc (send, write) or ud (send only, size up to the path MTU)")
	qps := fs.IntP("qps", "q", 0, "bw: measure on this many QPs at once (1..64), each with its own CQs and engine; iterations are the total over all QPs")
	threads := fs.Int("threads", 0, "bw: drive the --qps QPs from this many client threads (1..QPs), QP i on thread i mod N")
	mrMode := fs.String("mr-mode", result.MRModePool, "memory registration of the data path: pool (a fresh pool per test, registered once), "+
		"per-op (the client registers each operation's local buffer before its post and deregisters it at its completion) or odp (On-Demand Paging pools)")
	bidir := fs.BoolP("bidirectional", "b", false, "bw: both sides post at once, the server towards the client too (perftest -b); the table and JSON bandwidth are the sum of both directions, JSON sides has each")
	reportBoth := fs.Bool("report-both", false, "with -b: also print each side's figures (bytes, messages, bandwidth, message rate) under the sum (perftest --report-both)")
	rdmaCM := fs.BoolP("rdma-cm", "R", false, "create and connect the QPs with librdmacm (rdma_cm), as iWARP needs, instead of exchanging QP numbers on the control connection (perftest -R); RC only")
	hugePages := fs.Bool("hugepages", false, "map the data path buffers from 2 MiB huge pages (reserve them with sysctl vm.nr_hugepages=N)")
	verify := fs.Bool("verify", false, "check payloads in a pass after each measured run, outside every timed interval: the client fills each message with a pattern "+
		"of the test and the message, the server checks what SEND and WRITE delivered, the client what READ fetched; a mismatch names the offset and both bytes "+
		"and exits 5 (perftest --data_validation); not for atomics or TCP")
	srq := fs.Bool("srq", false, "send tests: the receiving QPs take their receives from one shared receive queue per side (the server's --qps QPs share one; "+
		"in latency tests the client's QP, which receives the replies, has one too) (perftest --use-srq); RC and UD; without --op, runs send only")
	loadQPs := fs.Int("load-qps", 0, "latency under load: stream on this many more QPs while latency is measured")
	loadOp := fs.String("load-op", result.OpWrite, "operation of the load streams: write or read")
	loadSize := fs.String("load-size", report.SizeLabel(bench.DefaultLoadSize), "message size of the load streams")
	cpuList := fs.String("cpu", "", "pin threads: the first CPU takes the client's engine thread; in loopback the second takes the server's responder; the rest (or all) take load QP threads, e.g. --cpu 0 or --cpu 0,1,2-3")
	interval := fs.Duration("interval", 0, "print interval lines this often (default: 1s in duration mode)")
	unit := fs.String("unit", "MiB", "bandwidth unit of the table: MiB (MiB/sec, perftest's), MB (10^6 B/s), Gb (Gb/sec)")
	jsonPath := fs.String("json", "", "write the whole result document to this file (- for stdout)")
	hlogPath := fs.String("hlog", "", "write HdrHistogram interval logs (one histogram per second, tagged per test) to this .hlog file")
	hgrmPrefix := fs.String("hgrm", "", "write one HdrHistogram percentile file per test: PREFIX-<op>-<mode>-<size>B.hgrm (values in usec)")
	connTimeout := fs.Duration("connect-timeout", 30*time.Second, "give up connecting to the server after this long")
	stats := addStatsFlags(fs)
	var nf numaFlags
	nf.add(fs, "the engine threads")
	shape := addShapeFlags(fs)
	var bud budgetFlags
	bud.add(fs, false)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if err := checkRunFlags(fs, &d, *port, *loadQPs, *warmup, *jsonPath, *hgrmPrefix, map[string]time.Duration{
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
	if !loopback {
		if fs.NArg() != 1 {
			return usageError{fmt.Errorf("run needs the server's host name or address (got %d arguments)", fs.NArg())}
		}
		addr = net.JoinHostPort(fs.Arg(0), strconv.Itoa(*port))
	} else if fs.NArg() != 0 {
		return usageError{fmt.Errorf("loopback takes no arguments (got %q)", fs.Args())}
	}
	plan := bench.Plan{Template: bench.Spec{
		Iters: *iters, Duration: *dur, Warmup: *warmup, WarmupTime: *warmupTime,
		TxDepth: *tx, CQMod: *cqmod, RxDepth: *rx, MTU: *mtu, PostList: *postList, Event: *event,
		QPTimeout: *qpTimeout, RetryCount: *retryCount, RNRRetry: *rnrRetry, OutstandingReads: *outReads,
		Rate: *rate, Schedule: *schedule, SL: *sl, TClass: *tclass, QPType: strings.ToLower(*qpType), Transport: *transport,
		QPs: *qps, Threads: *threads, MRMode: strings.ToLower(*mrMode), HugePages: *hugePages, RDMACM: *rdmaCM,
		Bidirectional: *bidir,
		Verify:        *verify, SRQ: *srq,
	}}
	if *reportBoth && !*bidir {
		return usageError{fmt.Errorf("--report-both reports the two sides of a bidirectional test: add -b")}
	}
	if err := shape.apply(&plan.Template); err != nil {
		return err
	}
	if err := stats.apply(&plan.Template); err != nil {
		return err
	}
	if plan.Template.InlinePolicy, plan.Template.Inline, err = parseInline(*inline); err != nil {
		return usageError{err}
	}
	for _, f := range []struct {
		name  string
		v, lo int
	}{{"qp-timeout", *qpTimeout, 1}, {"retry-count", *retryCount, 1}, {"rnr-retry", *rnrRetry, 1}, {"outstanding-reads", *outReads, 0}} {
		if f.v < f.lo { // 0 would silently mean the default
			return usageError{fmt.Errorf("--%s %d: must be at least %d", f.name, f.v, f.lo)}
		}
	}
	if (*transport == result.TransportTCP || *srq) && !fs.Changed("op") {
		*ops = result.OpSend // the one op with a TCP equivalent, or that consumes receives
	}
	if fs.Changed("op") || plan.Template.QPType == "" || plan.Template.QPType == result.QPTypeRC || *transport == result.TransportTCP {
		if plan.Ops, err = bench.ParseList("op", *ops, result.Ops); err != nil {
			return usageError{err}
		}
	} // else: the plan picks the ops the QP type supports (uc: send, write; ud: send)
	if plan.Modes, err = bench.ParseList("mode", *modes, result.Modes); err != nil {
		return usageError{err}
	}
	if *sizes != "" {
		if plan.Sizes, err = bench.ParseSizes(*sizes); err != nil {
			return usageError{err}
		}
	}
	if *unit != result.UnitMiB && *unit != result.UnitMB && *unit != result.UnitGb {
		return usageError{fmt.Errorf("unit %q unknown; valid: MiB, MB, Gb", *unit)}
	}
	if *loadQPs > 0 {
		ls, err := bench.ParseSize(*loadSize)
		if err != nil {
			return usageError{fmt.Errorf("--load-size: %w", err)}
		}
		plan.Template.Load = &bench.Load{QPs: *loadQPs, Op: *loadOp, Size: ls, TxDepth: *tx} // 0: the defaults
	}
	specs, err := plan.Specs()
	if err != nil {
		return usageError{err}
	}
	if err := bench.CheckBudget(specs, budget, loopback); err != nil { // before anything is mapped: exit 3
		return err
	}
	cpu := -1
	var loadCPUs, serverCPUs []int
	if *cpuList != "" {
		cpus, err := bench.ParseCPUs(*cpuList, runtime.NumCPU())
		if err != nil {
			return usageError{fmt.Errorf("--cpu: %w", err)}
		}
		cpu, loadCPUs = cpus[0], cpus
		if loopback && len(cpus) > 1 {
			serverCPUs = cpus[1:2]
		}
		if len(cpus) > 2 {
			loadCPUs = cpus[2:]
		}
	}
	intervalOut := stdout
	if *jsonPath == "-" { // keep stdout pure JSON
		intervalOut = stderr
	}
	cfg := bench.RunConfig{
		Client: bench.ClientConfig{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, Transport: *transport, RDMACM: *rdmaCM, NUMA: numaChoice,
			Run: bench.RunOptions{CPU: cpu, LoadCPUs: loadCPUs, Interval: *interval, Out: intervalOut, Unit: *unit}},
		ServerCPUs: serverCPUs,
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
	devices := strings.Split(d.device, ",")
	if len(devices) > 1 && *jsonPath == "-" {
		return usageError{fmt.Errorf("--json - with %d devices (-d %s): one document per device needs a file name", len(devices), d.device)}
	}
	var docs []*result.Document
	for _, dev := range devices {
		cfg.Client.Device = strings.TrimSpace(dev)
		var doc *result.Document
		if loopback {
			doc, err = bench.RunLoopback(ctx, cfg, log.New(io.Discard, "", 0))
		} else {
			doc, err = bench.RunClient(ctx, addr, cfg)
		}
		if errors.Is(err, bench.ErrNoHugePages) {
			err = envError{err} // exit 3, as for rdmabench mr
		}
		if doc != nil {
			if werr := printReport(doc, stdout, *unit, devicePath(*jsonPath, cfg.Client.Device, len(devices)), *reportBoth, *stats.ci); werr != nil && err == nil {
				err = werr
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
	}
	if len(docs) > 1 { // the fabric comparison: one column per device
		fmt.Fprintln(stdout)
		return compare.Compare(docs, devices).WriteTable(stdout, nil, *unit)
	}
	return nil
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

// printReport writes doc's header and tables (unless jsonPath is "-") and
// its JSON (jsonPath); with reportBoth the bandwidth table has each side of
// a bidirectional test under the sum; with ci the latency table is followed
// by the percentiles' confidence intervals.
func printReport(doc *result.Document, w io.Writer, unit, jsonPath string, reportBoth, ci bool) error {
	if jsonPath != "-" {
		report.WriteHeader(w, doc)
		var lat, bw []result.Result
		for _, r := range doc.Results {
			if r.Mode == result.ModeLat {
				lat = append(lat, r)
			} else {
				bw = append(bw, r)
			}
		}
		if len(lat) > 0 {
			report.WriteLatencyTable(w, lat)
			if ci {
				report.WriteCITable(w, lat)
			}
		}
		if len(bw) > 0 {
			report.WriteBandwidthTableSides(w, bw, unit, reportBoth)
		}
		report.WriteRepeatTable(w, doc.Results, unit)
		report.WriteLoadSweeps(w, doc.LoadSweeps, unit)
		report.WriteConnectionTable(w, doc.Results)
		report.WriteCounterLines(w, doc.Results)
		for _, s := range doc.Warnings {
			fmt.Fprintf(w, "WARNING: %s\n", s)
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
		return bench.InlineAuto, 0, nil
	case "perftest":
		return bench.InlinePerftest, 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > bench.MaxInline {
		return "", 0, fmt.Errorf("--inline-size %q: want auto, perftest or a size of 0..%d bytes", v, bench.MaxInline)
	}
	return bench.InlineSize, n, nil
}
