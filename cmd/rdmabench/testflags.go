package main

import (
	"fmt"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/clock"
)

// testFlags are the flags that make the test list (ops, modes, sizes and
// every test parameter), shared by run, loopback and mesh.
type testFlags struct {
	ops        *string
	modes      *string
	sizes      *string
	iters      *int64
	dur        *time.Duration
	warmup     *int64
	warmupTime *time.Duration
	tx         *int
	cqmod      *int
	rx         *int
	inline     *string
	qpTimeout  *int
	retryCount *int
	rnrRetry   *int
	outReads   *int
	postList   *int
	event      *bool
	mtu        *int
	rate       *float64
	schedule   *string
	transport  *string
	sl         *int
	tclass     *int
	qpType     *string
	qps        *int
	threads    *int
	mrMode     *string
	bidir      *bool
	rdmaCM     *bool
	hugePages  *bool
	verify     *bool
	srq        *bool
	loadQPs    *int
	loadOp     *string
	loadSize   *string
	stats      *statsFlags
	shape      *shapeFlags
	choices    *choiceFlags
	workload   *workloadFlags
	clock      *string
}

// addTestFlags defines the test flags on fs.
func addTestFlags(fs *flag.FlagSet) *testFlags {
	t := &testFlags{}
	t.ops = fs.String("op", "send,write,read", "operations: "+strings.Join(opNames(), ", ")+", or all")
	t.modes = fs.String("mode", "lat,bw", "modes: lat (ping-pong latency), bw (streaming bandwidth)")
	t.sizes = fs.StringP("size", "s", "", "message sizes: list and power-of-two ranges, e.g. 2,64,4K,1M or 2-8M (default: 2 for lat, 64K for bw)")
	t.iters = fs.Int64P("iters", "n", 0, "measured iterations per test (default: 10000 lat, 5000 bw)")
	t.dur = new(time.Duration)
	fs.VarP((*secondsDuration)(t.dur), "duration", "D", "measure each test for this long instead of a count: seconds (10, as perftest -D) or a duration (10s, 500ms)")
	t.warmup = fs.Int64("warmup", -1, "warm-up iterations before measuring (default: 1% of iterations, at least 100, for lat; tx depth for bw)")
	t.warmupTime = fs.Duration("warmup-time", 0, "warm up for this long instead of a count, e.g. 500ms")
	t.tx = fs.IntP("tx-depth", "t", 0, "outstanding sends in bw mode (default 128)")
	t.cqmod = fs.IntP("cq-mod", "Q", 0, "signal one completion every N sends in bw mode (default min(100, tx depth))")
	t.rx = fs.IntP("rx-depth", "r", 0, "receives kept posted (default 512)")
	t.inline = fs.StringP("inline-size", "I", "auto", "inline data: auto (latency SEND/WRITE up to what the device grants, capped at perftest's 236/220/188 B; "+
		"none in bandwidth tests), perftest (perftest's exact rules: 0 on devices it does not recognise, such as rxe and siw), or a size in bytes")
	t.qpTimeout = fs.IntP("qp-timeout", "u", spec.DefaultQPTimeout, "RC ACK timeout exponent: 4.096 µs × 2^N per try, 1..31 (perftest -u)")
	t.retryCount = fs.Int("retry-count", spec.DefaultRetryCount, "RC transport retries before the QP fails, 1..7")
	t.rnrRetry = fs.Int("rnr-retry", spec.DefaultRNRRetry, "receiver-not-ready retries, 1..7 (7: retry forever)")
	t.outReads = fs.IntP("outstanding-reads", "o", 0, "READ/atomic operations in flight per QP, max_rd_atomic (default: the device's max_qp_rd_atom for READ and atomics, as perftest -o)")
	t.postList = fs.IntP("post-list", "l", 0, "bw: chain this many work requests per ibv_post_send (perftest -l)")
	t.event = fs.BoolP("event", "e", false, "sleep on completion channels (interrupts) instead of busy polling (perftest -e)")
	t.mtu = fs.IntP("mtu", "m", 0, "path MTU, bytes (default: the smaller active MTU of both ports)")
	t.rate = fs.Float64("rate", 0, "open-loop latency: send this many operations per second and time each from its intended send time, e.g. --rate 2000")
	t.schedule = fs.String("schedule", result.ScheduleConstant, "open-loop schedule: constant or poisson")
	t.transport = fs.String("transport", result.TransportRDMA, "data path: rdma, or tcp (kernel TCP baseline: send lat and bw; needs no RDMA device)")
	t.sl = fs.IntP("sl", "S", 0, "service level of the QPs, 0..15")
	t.tclass = fs.Int("tclass", 0, "GRH traffic class of the QPs, 0..255 (RoCE: DSCP << 2 | ECN)")
	t.qpType = fs.StringP("qp-type", "c", "rc", "queue pair type: rc, uc (send, write) or ud (send only, size up to the path MTU); case-insensitive, as perftest -c RC|UC|UD")
	t.qps = fs.IntP("qps", "q", 0, "bw: measure on this many QPs at once (1..1024), each with its own CQs and engine; iterations are the total over all QPs")
	t.threads = fs.Int("threads", 0, "bw: drive the --qps QPs from this many client threads (1..QPs), QP i on thread i mod N")
	t.mrMode = fs.String("mr-mode", result.MRModePool, "memory registration of the data path: pool (a fresh pool per test, registered once), "+
		"per-op (the client registers each operation's local buffer before its post and deregisters it at its completion) or odp (On-Demand Paging pools)")
	t.bidir = fs.BoolP("bidirectional", "b", false, "bw: both sides post at once, the server towards the client too (perftest -b); the table and JSON bandwidth are the sum of both directions, JSON sides has each")
	t.rdmaCM = fs.BoolP("rdma-cm", "R", false, "create and connect the QPs with librdmacm (rdma_cm), as iWARP needs, instead of exchanging QP numbers on the control connection (perftest -R); RC only")
	t.hugePages = fs.Bool("hugepages", false, "map the data path buffers from 2 MiB huge pages (reserve them with sysctl vm.nr_hugepages=N)")
	t.verify = fs.Bool("verify", false, "check payloads in a pass after each measured run, outside every timed interval: the client fills each message with a pattern "+
		"of the test and the message, the server checks what SEND and WRITE delivered, the client what READ fetched; a mismatch names the offset and both bytes "+
		"and exits 5 (perftest --data_validation); not for atomics, TCP or -b")
	t.srq = fs.Bool("srq", false, "send tests: the receiving QPs take their receives from one shared receive queue per side (the server's --qps QPs share one; "+
		"in latency tests the client's QP, which receives the replies, has one too) (perftest --use-srq); RC and UD; without --op, runs send only")
	t.loadQPs = fs.Int("load-qps", 0, "latency under load: stream on this many more QPs while latency is measured")
	t.loadOp = fs.String("load-op", result.OpWrite, "operation of the load streams: write or read")
	t.loadSize = fs.String("load-size", report.SizeLabel(spec.DefaultLoadSize), "message size of the load streams")
	t.stats = addStatsFlags(fs)
	t.shape = addShapeFlags(fs)
	t.choices = addChoiceFlags(fs)
	t.workload = addWorkloadFlags(fs)
	t.clock = fs.String("clock", clock.Auto, "the timed loops' clock: auto (the CPU's counter, rdtsc or cntvct_el0, calibrated against CLOCK_MONOTONIC_RAW, "+
		"where it is invariant and the kernel's clocksource; else CLOCK_MONOTONIC_RAW), tsc (force the counter) or monotonic (force CLOCK_MONOTONIC_RAW)")
	return t
}

// specs builds the test list from the parsed flags.
func (t *testFlags) specs(fs *flag.FlagSet) ([]spec.Spec, error) {
	plan, err := t.plan(fs)
	if err != nil {
		return nil, err
	}
	specs, err := plan.Specs()
	if err != nil {
		return nil, usageError{err}
	}
	return specs, nil
}

// plan is the plan of the parsed flags, not yet expanded into tests.
func (t *testFlags) plan(fs *flag.FlagSet) (spec.Plan, error) {
	plan := spec.Plan{Template: spec.Spec{
		Iters: *t.iters, Duration: *t.dur, Warmup: *t.warmup, WarmupTime: *t.warmupTime,
		TxDepth: *t.tx, CQMod: *t.cqmod, RxDepth: *t.rx, MTU: *t.mtu, PostList: *t.postList, Event: *t.event,
		QPTimeout: *t.qpTimeout, RetryCount: *t.retryCount, RNRRetry: *t.rnrRetry, OutstandingReads: *t.outReads,
		Rate: *t.rate, Schedule: *t.schedule, SL: *t.sl, TClass: *t.tclass, QPType: strings.ToLower(*t.qpType), Transport: *t.transport,
		QPs: *t.qps, Threads: *t.threads, MRMode: strings.ToLower(*t.mrMode), HugePages: *t.hugePages, RDMACM: *t.rdmaCM,
		Bidirectional: *t.bidir,
		Verify:        *t.verify, SRQ: *t.srq,
	}}
	if err := t.shape.apply(&plan.Template); err != nil {
		return plan, err
	}
	if err := t.choices.apply(&plan.Template); err != nil {
		return plan, err
	}
	if err := t.workload.apply(&plan.Template); err != nil {
		return plan, err
	}
	if err := t.stats.apply(&plan.Template); err != nil {
		return plan, err
	}
	if err := clock.SetMode(*t.clock); err != nil {
		return plan, usageError{err}
	}
	var err error
	if plan.Template.InlinePolicy, plan.Template.Inline, err = parseInline(*t.inline); err != nil {
		return plan, usageError{err}
	}
	for _, f := range []struct {
		name  string
		v, lo int
	}{{"qp-timeout", *t.qpTimeout, 1}, {"retry-count", *t.retryCount, 1}, {"rnr-retry", *t.rnrRetry, 1}, {"outstanding-reads", *t.outReads, 0}} {
		if f.v < f.lo { // 0 would silently mean the default
			return plan, usageError{fmt.Errorf("--%s %d: must be at least %d", f.name, f.v, f.lo)}
		}
	}
	if (*t.transport == result.TransportTCP || *t.srq) && !fs.Changed("op") {
		*t.ops = result.OpSend // the one op with a TCP equivalent, or that consumes receives
	}
	if fs.Changed("op") || plan.Template.QPType == "" || plan.Template.QPType == result.QPTypeRC || *t.transport == result.TransportTCP {
		if plan.Ops, err = spec.ParseList("op", *t.ops, result.Ops); err != nil {
			return plan, usageError{err}
		}
	} // else: the plan picks the ops the QP type supports (uc: send, write; ud: send)
	if plan.Modes, err = spec.ParseList("mode", *t.modes, result.Modes); err != nil {
		return plan, usageError{err}
	}
	if *t.sizes != "" {
		if plan.Sizes, err = spec.ParseSizes(*t.sizes); err != nil {
			return plan, usageError{err}
		}
	}
	if *t.loadQPs > 0 {
		ls, err := spec.ParseSize(*t.loadSize)
		if err != nil {
			return plan, usageError{fmt.Errorf("--load-size: %w", err)}
		}
		plan.Template.Load = &spec.Load{QPs: *t.loadQPs, Op: *t.loadOp, Size: ls, TxDepth: *t.tx} // 0: the defaults
	}
	return plan, nil
}
