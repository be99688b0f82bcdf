package kinds

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/drain"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// multiKind is a bandwidth test on several QPs (--qps): the client's
// threads stream on every measured QP (MeasureBWMulti); the server
// receives SENDs on one thread that polls every QP, as perftest's server
// does (one busy poller per QP would time-slice on a host with fewer cores
// than QPs, and late re-posts cost RNR NAKs), or one loop per QP with
// --event; WRITE, READ and atomics are its NIC's.
type multiKind struct{}

func (multiKind) Measure(t *ClientTest) (Measured, error) {
	res, totals, err := MeasureBWMulti(t.EPs.Measured(), t.Spec, t.Opts)
	m := Measured{Res: res, Totals: totals}
	for _, n := range totals {
		m.Total += n
	}
	return m, err
}

func (multiKind) Respond(t *ServerTest) error {
	active := t.Spec.Traits().ConsumesRecv
	return t.serveLoops(responders{active: active, oneThread: active && !t.Spec.Event, loop: (*verbs.Engine).BWServer})
}

// threadCPUOf is the CPU of client thread t: o.CPU for the first, the load
// CPUs round robin for the others (-1: not pinned).
func threadCPUOf(o measure.Options, t int) int {
	if t == 0 || o.CPU < 0 {
		return o.CPU
	}
	if len(o.LoadCPUs) == 0 {
		return -1
	}
	return o.LoadCPUs[(t-1)%len(o.LoadCPUs)]
}

// allComplete reports whether every engine completed its target.
func allComplete(engs []*verbs.Engine, targets []uint64) bool {
	for k, e := range engs {
		if e.Completed() < targets[k] {
			return false
		}
	}
	return true
}

// errOtherThread stops a multi-QP thread whose test another thread failed
// (that thread's error reports).
var errOtherThread = errors.New("another thread of the test failed")

// multiSender is one thread of a multi-QP test as a measure.BWSender: its engines,
// driven round robin in one C loop (BWClientMulti).
type multiSender struct {
	engs    []*verbs.Engine
	targets []uint64
	failed  *atomic.Bool // another thread failed: stop
	reset   bool         // each step drops the samples first (the warm-up: no ring)
}

func (m *multiSender) setTargets(f func(k int) uint64) {
	for k, e := range m.engs {
		m.targets[k] = f(k)
		e.SetTarget(m.targets[k])
	}
}

func (m *multiSender) Step(until int64) (bool, error) {
	if m.failed.Load() {
		return false, errOtherThread
	}
	if m.reset {
		for _, e := range m.engs {
			e.ResetSamples()
		}
	}
	return verbs.BWClientMulti(m.engs, until)
}

func (m *multiSender) Completed() uint64 {
	var n uint64
	for _, e := range m.engs {
		n += e.Completed()
	}
	return n
}

func (m *multiSender) Done() bool { return allComplete(m.engs, m.targets) }

// stopPosting: one more signaled operation per QP completes its unsignaled
// tail.
func (m *multiSender) StopPosting() {
	m.setTargets(func(k int) uint64 { return m.engs[k].Posted() + 1 })
}

func (m *multiSender) WaitRoom() error {
	for _, e := range m.engs {
		if err := measure.WaitRoom(e); err != nil {
			return err
		}
	}
	return nil
}

// MeasureBWMulti runs the client side of a bandwidth test on several QPs:
// QP i on thread i mod Spec.Threads, each thread driving its QPs round
// robin in C, through measure.BWPhase. One drainer records every QP's samples from
// its ring (a lane per thread) and counts the test's intervals once, over
// all QPs. Bandwidth is the total bytes over the earliest first post to
// the latest last completion; latency merges every QP's histogram. It
// returns the result and each QP's total operations including warm-up.
func MeasureBWMulti(eps []*endpoint.Endpoint, s spec.Spec, o measure.Options) (result.Result, []int64, error) {
	r := newMultiRun(eps, s, o)
	r.warm.Add(r.m)
	for t := range r.m {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.errs[t] = r.thread(t)
		}()
	}
	r.warm.Wait()
	iv, prog := r.begin()
	r.wg.Wait()
	r.dr.Finish()
	prog.Clear()
	for _, ep := range eps {
		ep.Eng.SetRing(false) //nolint:errcheck // off never fails
	}
	totals := make([]int64, r.n)
	for i, ep := range eps {
		totals[i] = r.warmed[i] + int64(ep.Eng.Completed())
	}
	if err := errors.Join(r.errs...); err != nil {
		return result.Result{}, totals, err
	}
	res, err := r.result(iv)
	return res, totals, err
}

// multiRun is one MeasureBWMulti: its QPs, their threads and what the
// threads share.
type multiRun struct {
	eps    []*endpoint.Endpoint
	s      spec.Spec
	o      measure.Options
	n, m   int               // QPs, threads
	groups [][]int           // each thread's QPs: QP i on thread i mod m
	lats   []*hist.Histogram // each QP's latency
	warmed []int64           // each QP's warm-up operations
	// warm is done when every thread is warm, wg when every thread ended;
	// the threads start their measured phase when started is closed.
	warm, wg sync.WaitGroup
	started  chan struct{}
	// Set before started is closed, read by the threads after: the
	// drainer, the first interval's end and the interval (ns), the end of
	// a timed test (ns, CLOCK_MONOTONIC_RAW; math.MaxInt64: none).
	dr                      *drain.Drain
	nextIv, every, deadline int64
	failed                  atomic.Bool
	errs                    []error // each thread's
	cpuUser, cpuSys         []int64 // each thread's CPU time, ns
}

func newMultiRun(eps []*endpoint.Endpoint, s spec.Spec, o measure.Options) *multiRun {
	n, m := len(eps), s.NumThreads()
	r := &multiRun{eps: eps, s: s, o: o, n: n, m: m, groups: make([][]int, m), lats: make([]*hist.Histogram, n), warmed: make([]int64, n),
		started: make(chan struct{}), deadline: math.MaxInt64, errs: make([]error, m), cpuUser: make([]int64, m), cpuSys: make([]int64, m)}
	for i := range eps {
		r.groups[i%m] = append(r.groups[i%m], i)
		r.lats[i] = hist.New()
	}
	return r
}

// fail reports the first failure of a thread and stops the others (their
// C loops return aborted); the failures that follow report nil.
func (r *multiRun) fail(err error) error {
	if r.failed.Swap(true) {
		return nil
	}
	for _, ep := range r.eps {
		ep.Eng.Abort()
	}
	return err
}

// thread is thread t: pinned, its warm-up, then (once started) its
// measured phase.
func (r *multiRun) thread(t int) error {
	warmDone := sync.OnceFunc(r.warm.Done)
	defer warmDone()
	defer measure.UnlockThread()
	if err := measure.LockThread(threadCPUOf(r.o, t), r.o.NodeCPUs); err != nil {
		return r.fail(err)
	}
	snd, err := r.warmUp(t)
	if err != nil {
		return r.fail(err)
	}
	warmDone()
	<-r.started
	return r.measured(t, snd)
}

// warmUp is thread t's sender and its warm-up (its samples dropped); then
// the measured samples go to the rings, which the drainer records while
// the thread stays in the C loop.
func (r *multiRun) warmUp(t int) (*multiSender, error) {
	s, idx := r.s, r.groups[t]
	snd := &multiSender{engs: make([]*verbs.Engine, len(idx)), targets: make([]uint64, len(idx)), failed: &r.failed}
	for k, i := range idx {
		snd.engs[k] = r.eps[i].Eng
	}
	if s.Warmup > 0 || s.WarmupTime > 0 {
		snd.setTargets(func(int) uint64 { return measure.WarmTarget(s) })
		snd.reset = true
		if err := measure.BWWarmup(snd, s); err != nil {
			return nil, err
		}
		snd.reset = false
		for k, i := range idx {
			r.warmed[i] = int64(snd.engs[k].Completed())
			snd.engs[k].ResetCounters()
		}
	}
	for _, e := range snd.engs {
		if err := e.SetRing(true); err != nil {
			return nil, err
		}
	}
	return snd, nil
}

// measured is thread t's measured phase on its sender snd, with its CPU
// time.
func (r *multiRun) measured(t int, snd *multiSender) error {
	cpu := measure.StartCPU()
	defer func() { r.cpuUser[t], r.cpuSys[t] = cpu.Stop() }()
	idx := r.groups[t]
	snd.setTargets(func(k int) uint64 {
		if r.s.Iters > 0 {
			return uint64(endpoint.QPIters(r.s.Iters, r.n, idx[k]))
		}
		return math.MaxUint64
	})
	if err := measure.BWPhase(snd, r.dr.Lane(t), r.nextIv, r.deadline, time.Duration(r.every)); err != nil {
		return r.fail(err) // nil after another thread's failure (errOtherThread, aborted)
	}
	return nil
}

// begin starts the measured phase once every thread is warm: the clock,
// the intervals and the status line, the drainer with a lane per thread;
// then it releases the threads.
func (r *multiRun) begin() (*measure.Intervals, *measure.Progress) {
	start := verbs.Now()
	if r.s.Duration > 0 {
		r.deadline = start + int64(r.s.Duration)
	}
	iv := measure.NewIntervals(r.s, r.o, start)
	prog := measure.NewProgress(r.s, r.o, start)
	r.nextIv, r.every = iv.Next, int64(iv.Every)
	rings := make([][]measure.SampleRing, r.m)
	qlats := make([][]*hist.Histogram, r.m)
	for t, idx := range r.groups {
		for _, i := range idx {
			rings[t] = append(rings[t], r.eps[i].Eng)
			qlats[t] = append(qlats[t], r.lats[i])
		}
	}
	r.dr = measure.StartLanes(rings, qlats, iv, prog)
	close(r.started)
	return iv, prog
}

// result is the test's result from every QP's figures and the intervals
// iv: bandwidth over the earliest first post to the latest last
// completion, every QP's latency merged, each QP's own.
func (r *multiRun) result(iv *measure.Intervals) (result.Result, error) {
	s, m := r.s, r.m
	res := measure.BaseResult(s, r.eps[0])
	res.Choices = endpoint.ChoicesResult(s, r.eps...)
	res.QPs, res.Threads = r.n, m
	lat := hist.New()
	first, last := int64(math.MaxInt64), int64(0)
	var ops, warmAll, user, sys int64
	for i, ep := range r.eps {
		q := int64(ep.Eng.Completed())
		f, l := ep.Eng.Span()
		if q > 0 {
			first, last = min(first, f), max(last, l)
		}
		lat.Merge(r.lats[i])
		ops += q
		warmAll += r.warmed[i]
		res.PerQP = append(res.PerQP, result.QPResult{QPN: ep.QP.QPN(), Thread: i % m, Ops: q, Bandwidth: result.NewBandwidth(s.Size, q, l-f),
			Latency: result.NewLatencyAt(r.lats[i], 1, s.Stats())})
	}
	for t := range m {
		user += r.cpuUser[t]
		sys += r.cpuSys[t]
	}
	if first > last {
		first = last
	}
	iv.Flush(last)
	if iv.Err != nil {
		return result.Result{}, fmt.Errorf("write .hlog: %w", iv.Err)
	}
	res.Iterations = ops
	res.DurationNS = last - first
	res.CPU = &result.CPUUsage{ClientUserNS: user, ClientSysNS: sys, ClientUSPerMsg: measure.PerMsgUS(user+sys, ops)}
	res.Bandwidth = result.NewBandwidth(s.Size, ops, last-first)
	res.Intervals = iv.List
	if err := res.SetLatency(lat, 1); err != nil {
		return result.Result{}, fmt.Errorf("encode histogram: %w", err)
	}
	res.Warmup = warmAll
	return res, nil
}
