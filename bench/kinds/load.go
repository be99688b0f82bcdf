package kinds

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/testhook"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// loadKind is latency under load (Spec.Load): a latency test (latKind)
// while the client's load QPs stream beside it (startLoad) and, with
// Load.ChurnSize, a thread registers and deregisters memory; the server
// answers the latency test and, for an RNR storm, keeps one receive
// posted on each load QP (startRNRReceivers).
type loadKind struct{}

func (loadKind) Measure(t *ClientTest) (Measured, error) {
	s, o, eps := t.Spec, t.Opts, t.EPs
	var load *loadRun
	if len(eps.Loads) > 0 || s.Load.ChurnSize > 0 {
		load = startLoad(eps.Loads, s.Load.Threads, o.LoadCPUs, o.NodeCPUs)
		if s.Load.ChurnSize > 0 { // registration churn: its own thread, after the streams' CPUs
			cpu := -1
			if len(o.LoadCPUs) > 0 {
				cpu = o.LoadCPUs[len(eps.Loads)%len(o.LoadCPUs)]
			}
			load.startChurn(eps.Mem.PD, s.Load.ChurnSize, cpu, o.NodeCPUs)
		}
	}
	m, err := latKind{}.Measure(t)
	if load != nil {
		lr, lerr := load.finish(s.Load)
		m.Res.Load, err = lr, errors.Join(err, lerr)
	}
	return m, err
}

func (loadKind) Respond(t *ServerTest) error {
	defer startRNRReceivers(t, ServerCPU(t.CPUs, len(t.EPs.Measured())))() // an RNR storm's load QPs
	return t.serveLoops(latResponders(t))
}

// loadRun streams on the load QPs until stop, each thread (Load.Threads)
// driving its QPs round robin, and runs the registration churn.
type loadRun struct {
	eps  []*endpoint.Endpoint
	stop atomic.Bool
	wg   sync.WaitGroup
	errs []error
	// the registration churn (Load.ChurnSize), when it runs; errs has one
	// entry per thread
	churn    *churnRun
	churnErr error
}

// loadSlice is how long one C call of a load stream runs before it checks
// the stop flag.
const loadSlice = 50 * time.Millisecond

// startLoad starts the streams of eps on threads threads (0: one per
// endpoint; endpoint i on thread i mod threads, each thread driving its
// endpoints round robin in one C loop), thread t pinned to cpus[t mod
// len(cpus)] (nil: to the NUMA node's CPUs node, or not pinned when nil too).
func startLoad(eps []*endpoint.Endpoint, threads int, cpus, node []int) *loadRun {
	if threads <= 0 || threads > len(eps) {
		threads = len(eps)
	}
	l := &loadRun{eps: eps, errs: make([]error, threads)}
	for t := range threads {
		var engs []*verbs.Engine
		for i := t; i < len(eps); i += threads {
			engs = append(engs, eps[i].Eng)
		}
		cpu := -1
		if len(cpus) > 0 {
			cpu = cpus[t%len(cpus)]
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.errs[t] = stream(engs, &l.stop, cpu, node)
		}()
	}
	return l
}

// stream posts on engs until stop, then completes the unsignaled tail.
func stream(engs []*verbs.Engine, stop *atomic.Bool, cpu int, node []int) error {
	defer measure.UnlockThread()
	if err := measure.LockThread(cpu, node); err != nil {
		return err
	}
	reset := func() {
		for _, eng := range engs {
			eng.ResetSamples()
		}
	}
	for _, eng := range engs {
		eng.SetTarget(math.MaxUint64)
	}
	for !stop.Load() {
		reset()
		if _, err := verbs.BWClientMulti(engs, verbs.Now()+int64(loadSlice)); err != nil {
			return err
		}
	}
	targets := make([]uint64, len(engs)) // one more post: the last one signaled, every earlier one known complete
	for i, eng := range engs {
		targets[i] = eng.Posted() + 1
		eng.SetTarget(targets[i])
	}
	done := func() bool {
		for i, eng := range engs {
			if eng.Completed() < targets[i] {
				return false
			}
		}
		return true
	}
	for !done() {
		reset()
		if _, err := verbs.BWClientMulti(engs, math.MaxInt64); err != nil {
			return err
		}
	}
	return nil
}

// finish stops the streams and sums what they did.
func (l *loadRun) finish(load *spec.Load) (*result.LoadResult, error) {
	l.stop.Store(true)
	l.wg.Wait()
	if err := errors.Join(append(l.errs, l.churnErr)...); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	res := &result.LoadResult{QPs: len(l.eps), Op: load.Op, SizeBytes: load.Size, AltSizeBytes: load.AltSize, RNR: load.RNR, MRs: load.MRs}
	var bytes, first, last int64 = 0, math.MaxInt64, 0
	for _, ep := range l.eps {
		n := int64(ep.Eng.Completed())
		res.Ops += n
		bytes += n * int64(ep.Spec.Size)
		f, t := ep.Eng.Span()
		first, last = min(first, f), max(last, t)
	}
	res.Bandwidth = result.NewBandwidth(1, bytes, last-first)
	res.Bandwidth.Mpps = result.NewBandwidth(1, res.Ops, last-first).Mpps
	if c := l.churn; c != nil {
		res.ChurnSizeBytes, res.Registrations = c.size, c.pairs
		if span := c.last - c.first; span > 0 {
			res.RegistrationsPerSec = float64(c.pairs) / (float64(span) / 1e9)
		}
	}
	return res, nil
}

// churnRun is the registration churn of a load (Load.ChurnSize): one
// locked thread registers and deregisters one buffer in a loop
// (verbs.PD.RegBench's C loop, one slice at a time) until the load stops.
type churnRun struct {
	size        int
	pairs       int64 // registrations (each deregistered) completed
	first, last int64 // CLOCK_MONOTONIC_RAW ns of the churn's span
}

// churnSlice is how many registrations one C call of the churn makes at
// most (it returns sooner, after loadSlice).
const churnSlice = 4096

// startChurn starts the registration churn of size bytes in pd beside the
// load's streams, on cpu (-1: the NUMA node's CPUs node, or not pinned).
func (l *loadRun) startChurn(pd *verbs.PD, size, cpu int, node []int) {
	c := &churnRun{size: size}
	l.churn = c
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.churnErr = churn(pd, c, &l.stop, cpu, node)
	}()
}

// churn registers and deregisters a fresh buffer's size bytes until stop.
func churn(pd *verbs.PD, c *churnRun, stop *atomic.Bool, cpu int, node []int) error {
	defer measure.UnlockThread()
	if err := measure.LockThread(cpu, node); err != nil {
		return err
	}
	buf, err := verbs.AllocBuffer(c.size, false)
	if err != nil {
		return fmt.Errorf("registration churn: %w", err)
	}
	defer buf.Close()
	c.first = verbs.Now()
	for !stop.Load() {
		reg, _, err := pd.RegBench(buf, c.size, verbs.AccessLocalWrite, churnSlice, loadSlice)
		c.pairs += int64(len(reg))
		if err != nil {
			return fmt.Errorf("registration churn of %d bytes: %w", c.size, err)
		}
	}
	c.last = verbs.Now()
	return nil
}

// The server's side of an RNR storm (Load.RNR, rdmabench isolation's
// rnr-storm): the client's load QPs stream SENDs, and the server keeps one
// receive posted on each (the load spec's rx depth 1), re-posting after
// each arrival from one thread that polls every load QP's receive CQ. The
// senders outrun it and collect receiver-not-ready NAKs, each retried
// after min_rnr_timer (rnr_retry 7: forever), so the attacker survives.

// startRNRReceivers starts the receivers of t's RNR load QPs (none
// without Load.RNR) on cpu; the returned function aborts them and waits.
func startRNRReceivers(t *ServerTest, cpu int) (stop func()) {
	spec, eps := t.Spec, t.EPs
	if spec.Load == nil || !spec.Load.RNR || len(eps.Loads) == 0 {
		return func() {}
	}
	engs := make([]*verbs.Engine, len(eps.Loads))
	for i, ep := range eps.Loads {
		engs[i] = ep.Eng
	}
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			defer testhook.ResponderThreads.Enter()()
			defer measure.UnlockThread()
			if err := measure.LockThread(cpu, eps.Loads[0].Dev.NodeCPUs()); err != nil {
				return err
			}
			which, err := verbs.BWServerMulti(engs)
			if err != nil && !errors.Is(err, verbs.ErrAborted) {
				return fmt.Errorf("RNR storm receiver, load QP %d: %w", which, err)
			}
			return nil
		}()
	}()
	return func() {
		for _, e := range engs {
			e.Abort()
		}
		if err := <-done; err != nil {
			t.Log.Printf("%s: %v", spec.Name(), err)
		}
	}
}
