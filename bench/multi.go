package bench

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// multiSlice is how long one C call of a multi-QP thread runs: Go enters
// once per slice to record samples and intervals.
const multiSlice = 5 * time.Millisecond

// qpIters is QP i's share of iters over n QPs: iters/n, one more for the
// first iters%n.
func qpIters(iters int64, n, i int) int64 {
	q := iters / int64(n)
	if int64(i) < iters%int64(n) {
		q++
	}
	return q
}

// threadCPUOf is the CPU of client thread t: o.CPU for the first, the load
// CPUs round robin for the others (-1: not pinned).
func threadCPUOf(o RunOptions, t int) int {
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

// measureBWMulti runs the client side of a bandwidth test on several QPs:
// QP i on thread i mod Spec.Threads, each thread driving its QPs round
// robin in C. Bandwidth is the total bytes over the earliest first post to
// the latest last completion; latency merges every QP's histogram. It
// returns the result and each QP's total operations including warm-up.
func measureBWMulti(eps []*endpoint, s Spec, o RunOptions) (result.Result, []int64, error) {
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
		mu             sync.Mutex // guards iv, prog, doneAll
		iv             *intervals
		prog           *progress
		doneAll        int64
		start          int64
		deadline       = far
		warm, wg       sync.WaitGroup
		begin          = make(chan struct{})
		failed         atomic.Bool
		errs           = make([]error, m)
		cpuUser, cpuSy = make([]int64, m), make([]int64, m)
	)
	warm.Add(m)
	for t := 0; t < m; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t] = func() error {
				warmDone := sync.OnceFunc(warm.Done)
				defer warmDone()
				defer unlockThread()
				if err := lockThread(threadCPUOf(o, t), o.NodeCPUs); err != nil {
					failed.Store(true)
					return err
				}
				idx := groups[t]
				engs := make([]*verbs.Engine, len(idx))
				targets := make([]uint64, len(idx))
				for k, i := range idx {
					engs[k] = eps[i].eng
				}
				setTargets := func(f func(k int) uint64) {
					for k, e := range engs {
						targets[k] = f(k)
						e.SetTarget(targets[k])
					}
				}
				resetSamples := func() {
					for _, e := range engs {
						e.ResetSamples()
					}
				}
				if s.Warmup > 0 || s.WarmupTime > 0 {
					target, until := uint64(s.Warmup), far
					if s.WarmupTime > 0 {
						target, until = math.MaxUint64, verbs.Now()+int64(s.WarmupTime)
					}
					setTargets(func(int) uint64 { return target })
					for !allComplete(engs, targets) {
						resetSamples()
						if _, err := verbs.BWClientMulti(engs, until); err != nil {
							failed.Store(true)
							return fmt.Errorf("warm-up: %w", err)
						}
						if until != far && verbs.Now() >= until {
							until = far // complete the unsignaled tails
							setTargets(func(k int) uint64 { return engs[k].Posted() + 1 })
						}
					}
					for k, i := range idx {
						warmed[i] = int64(engs[k].Completed())
						engs[k].ResetCounters()
					}
				}
				warmDone()
				<-begin
				cpu := startCPU()
				defer func() { cpuUser[t], cpuSy[t] = cpu.stop() }()
				setTargets(func(k int) uint64 {
					if s.Iters > 0 {
						return uint64(qpIters(s.Iters, n, idx[k]))
					}
					return math.MaxUint64
				})
				finishing := false
				lastDone := make([]uint64, len(engs))
				for !allComplete(engs, targets) {
					if failed.Load() {
						return nil // another thread failed: its error reports
					}
					resetSamples()
					if _, err := verbs.BWClientMulti(engs, min(verbs.Now()+int64(multiSlice), deadline)); err != nil {
						failed.Store(true)
						return err
					}
					now := verbs.Now()
					if !finishing && now >= deadline {
						// stop posting: one more signaled operation per QP completes
						// its unsignaled tail, which belongs to the last interval
						setTargets(func(k int) uint64 { return engs[k].Posted() + 1 })
						finishing = true
					}
					var delta int64
					mu.Lock()
					for k, e := range engs {
						samples := e.Samples()
						lats[idx[k]].RecordSlice(samples, 0)
						if iv.h != nil {
							iv.h.RecordSlice(samples, iv.shift)
						}
						done := e.Completed()
						delta += int64(done - lastDone[k])
						lastDone[k] = done
					}
					if finishing {
						iv.next = math.MaxInt64
					}
					doneAll += delta
					iv.add(nil, delta, now)
					if iv.h != nil {
						prog.update(now, doneAll, iv.h)
					}
					mu.Unlock()
				}
				return nil
			}()
		}()
	}
	warm.Wait()
	start = verbs.Now()
	if s.Duration > 0 {
		deadline = start + int64(s.Duration)
	}
	iv = newIntervals(s, o, start)
	prog = newProgress(s, o, start)
	close(begin)
	wg.Wait()
	prog.clear()
	totals := make([]int64, n)
	for i, ep := range eps {
		totals[i] = warmed[i] + int64(ep.eng.Completed())
	}
	if err := errors.Join(errs...); err != nil {
		return result.Result{}, totals, err
	}
	r := baseResult(s, eps[0])
	r.Choices = choicesResult(s, eps...)
	r.QPs, r.Threads = n, m
	lat := hist.New()
	first, last := far, int64(0)
	var ops, warmAll, user, sys int64
	for i, ep := range eps {
		q := int64(ep.eng.Completed())
		f, l := ep.eng.Span()
		if q > 0 {
			first, last = min(first, f), max(last, l)
		}
		lat.Merge(lats[i])
		ops += q
		warmAll += warmed[i]
		r.PerQP = append(r.PerQP, result.QPResult{QPN: ep.qp.QPN(), Thread: i % m, Ops: q, Bandwidth: result.NewBandwidth(s.Size, q, l-f),
			Latency: result.NewLatencyAt(lats[i], 1, s.Stats())})
	}
	for t := range m {
		user += cpuUser[t]
		sys += cpuSy[t]
	}
	if first > last {
		first = last
	}
	iv.flush(last)
	if iv.err != nil {
		return result.Result{}, totals, fmt.Errorf("write .hlog: %w", iv.err)
	}
	r.Iterations = ops
	r.DurationNS = last - first
	r.CPU = &result.CPUUsage{ClientUserNS: user, ClientSysNS: sys, ClientUSPerMsg: perMsgUS(user+sys, ops)}
	r.Bandwidth = result.NewBandwidth(s.Size, ops, last-first)
	r.Intervals = iv.list
	if err := r.SetLatency(lat, 1); err != nil {
		return result.Result{}, totals, fmt.Errorf("encode histogram: %w", err)
	}
	r.Warmup = warmAll
	return r, totals, nil
}
