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
	n, m := len(eps), s.NumThreads()
	far := int64(math.MaxInt64)
	lats := make([]*hist.Histogram, n)
	warmed := make([]int64, n)
	groups := make([][]int, m)
	for i := range eps {
		groups[i%m] = append(groups[i%m], i)
		lats[i] = hist.New()
	}
	var (
		dr             *drain.Drain
		nextIv, every  int64
		deadline       = far
		warm, wg       sync.WaitGroup
		begin          = make(chan struct{})
		failed         atomic.Bool
		errs           = make([]error, m)
		cpuUser, cpuSy = make([]int64, m), make([]int64, m)
	)
	// fail reports the first failure of a thread and stops the others
	// (their C loops return aborted); the failures that follow report nil
	fail := func(err error) error {
		if failed.Swap(true) {
			return nil
		}
		for _, ep := range eps {
			ep.Eng.Abort()
		}
		return err
	}
	warm.Add(m)
	for t := 0; t < m; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t] = func() error {
				warmDone := sync.OnceFunc(warm.Done)
				defer warmDone()
				defer measure.UnlockThread()
				if err := measure.LockThread(threadCPUOf(o, t), o.NodeCPUs); err != nil {
					return fail(err)
				}
				idx := groups[t]
				snd := &multiSender{engs: make([]*verbs.Engine, len(idx)), targets: make([]uint64, len(idx)), failed: &failed}
				for k, i := range idx {
					snd.engs[k] = eps[i].Eng
				}
				engs := snd.engs
				if s.Warmup > 0 || s.WarmupTime > 0 {
					snd.setTargets(func(int) uint64 { return measure.WarmTarget(s) })
					snd.reset = true // the warm-up's samples are dropped
					if err := measure.BWWarmup(snd, s); err != nil {
						return fail(err)
					}
					snd.reset = false
					for k, i := range idx {
						warmed[i] = int64(engs[k].Completed())
						engs[k].ResetCounters()
					}
				}
				// the measured samples go to the rings, which the drainer
				// records while this thread stays in the C loop
				for _, e := range engs {
					if err := e.SetRing(true); err != nil {
						return fail(err)
					}
				}
				warmDone()
				<-begin
				cpu := measure.StartCPU()
				defer func() { cpuUser[t], cpuSy[t] = cpu.Stop() }()
				snd.setTargets(func(k int) uint64 {
					if s.Iters > 0 {
						return uint64(endpoint.QPIters(s.Iters, n, idx[k]))
					}
					return math.MaxUint64
				})
				if err := measure.BWPhase(snd, dr.Lane(t), nextIv, deadline, time.Duration(every)); err != nil {
					return fail(err) // nil after another thread's failure (errOtherThread, aborted)
				}
				return nil
			}()
		}()
	}
	warm.Wait()
	start := verbs.Now()
	if s.Duration > 0 {
		deadline = start + int64(s.Duration)
	}
	iv := measure.NewIntervals(s, o, start)
	prog := measure.NewProgress(s, o, start)
	nextIv, every = iv.Next, int64(iv.Every)
	rings := make([][]measure.SampleRing, m)
	qlats := make([][]*hist.Histogram, m)
	for t, idx := range groups {
		for _, i := range idx {
			rings[t] = append(rings[t], eps[i].Eng)
			qlats[t] = append(qlats[t], lats[i])
		}
	}
	dr = measure.StartLanes(rings, qlats, iv, prog)
	close(begin)
	wg.Wait()
	dr.Finish()
	prog.Clear()
	for _, ep := range eps {
		ep.Eng.SetRing(false) //nolint:errcheck // off never fails
	}
	totals := make([]int64, n)
	for i, ep := range eps {
		totals[i] = warmed[i] + int64(ep.Eng.Completed())
	}
	if err := errors.Join(errs...); err != nil {
		return result.Result{}, totals, err
	}
	r := measure.BaseResult(s, eps[0])
	r.Choices = endpoint.ChoicesResult(s, eps...)
	r.QPs, r.Threads = n, m
	lat := hist.New()
	first, last := far, int64(0)
	var ops, warmAll, user, sys int64
	for i, ep := range eps {
		q := int64(ep.Eng.Completed())
		f, l := ep.Eng.Span()
		if q > 0 {
			first, last = min(first, f), max(last, l)
		}
		lat.Merge(lats[i])
		ops += q
		warmAll += warmed[i]
		r.PerQP = append(r.PerQP, result.QPResult{QPN: ep.QP.QPN(), Thread: i % m, Ops: q, Bandwidth: result.NewBandwidth(s.Size, q, l-f),
			Latency: result.NewLatencyAt(lats[i], 1, s.Stats())})
	}
	for t := range m {
		user += cpuUser[t]
		sys += cpuSy[t]
	}
	if first > last {
		first = last
	}
	iv.Flush(last)
	if iv.Err != nil {
		return result.Result{}, totals, fmt.Errorf("write .hlog: %w", iv.Err)
	}
	r.Iterations = ops
	r.DurationNS = last - first
	r.CPU = &result.CPUUsage{ClientUserNS: user, ClientSysNS: sys, ClientUSPerMsg: measure.PerMsgUS(user+sys, ops)}
	r.Bandwidth = result.NewBandwidth(s.Size, ops, last-first)
	r.Intervals = iv.List
	if err := r.SetLatency(lat, 1); err != nil {
		return result.Result{}, totals, fmt.Errorf("encode histogram: %w", err)
	}
	r.Warmup = warmAll
	return r, totals, nil
}
