package bench

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/verbs"
)

// loadRun streams on the load QPs, one locked OS thread each, until stop.
type loadRun struct {
	eps  []*endpoint
	stop atomic.Bool
	wg   sync.WaitGroup
	errs []error
}

// loadSlice is how long one C call of a load stream runs before it checks
// the stop flag.
const loadSlice = 50 * time.Millisecond

// startLoad starts one stream per endpoint, pinned round robin to cpus
// (nil: to the NUMA node's CPUs node, or not pinned when nil too).
func startLoad(eps []*endpoint, cpus, node []int) *loadRun {
	l := &loadRun{eps: eps, errs: make([]error, len(eps))}
	for i, ep := range eps {
		cpu := -1
		if len(cpus) > 0 {
			cpu = cpus[i%len(cpus)]
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.errs[i] = stream(ep.eng, &l.stop, cpu, node)
		}()
	}
	return l
}

// stream posts until stop, then completes the unsignaled tail.
func stream(eng *verbs.Engine, stop *atomic.Bool, cpu int, node []int) error {
	defer unlockThread()
	if err := lockThread(cpu, node); err != nil {
		return err
	}
	eng.SetTarget(math.MaxUint64)
	for !stop.Load() {
		eng.ResetSamples()
		if _, err := eng.BWClient(verbs.Now() + int64(loadSlice)); err != nil {
			return err
		}
	}
	target := eng.Posted() + 1
	eng.SetTarget(target)
	for eng.Completed() < target {
		eng.ResetSamples()
		if _, err := eng.BWClient(math.MaxInt64); err != nil {
			return err
		}
	}
	return nil
}

// finish stops the streams and sums what they did.
func (l *loadRun) finish(load *Load) (*result.LoadResult, error) {
	l.stop.Store(true)
	l.wg.Wait()
	if err := errors.Join(l.errs...); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	res := &result.LoadResult{QPs: len(l.eps), Op: load.Op, SizeBytes: load.Size}
	var first, last int64 = math.MaxInt64, 0
	for _, ep := range l.eps {
		res.Ops += int64(ep.eng.Completed())
		f, t := ep.eng.Span()
		first, last = min(first, f), max(last, t)
	}
	res.Bandwidth = result.NewBandwidth(load.Size, res.Ops, last-first)
	return res, nil
}
