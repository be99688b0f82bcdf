package bench

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/verbs"
)

// testEndpoints are one side's QPs of a test: the measured one and, for
// latency under load, the load QPs.
type testEndpoints struct {
	probe *endpoint
	extra []*endpoint // the measured QPs after probe (Spec.QPs > 1)
	loads []*endpoint
	mem   *testMemory // the pools every QP above takes its buffer from
	// rdma_cm tests: the client's event channel, or the server's listener
	// (closed after the endpoints and their ids)
	cmch *verbs.EventChannel
	lis  *cmListener
}

// measured is every measured QP: probe first, then extra.
func (t *testEndpoints) measured() []*endpoint {
	return append([]*endpoint{t.probe}, t.extra...)
}

func newTestEndpoints(dev *Device, s Spec, client bool) (_ *testEndpoints, err error) {
	t := &testEndpoints{}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if t.mem, err = newTestMemory(dev, s, client); err != nil {
		return nil, err
	}
	if t.probe, err = newEndpoint(dev, s, client, t.mem.measured); err != nil {
		return nil, err
	}
	for i := 1; i < s.NumQPs(); i++ {
		ep, err := newEndpoint(dev, s, client, t.mem.measured)
		if err != nil {
			return nil, fmt.Errorf("QP %d: %w", i, err)
		}
		t.extra = append(t.extra, ep)
	}
	if s.Load != nil {
		for i := 0; i < s.Load.QPs; i++ {
			ep, err := newEndpoint(dev, s.loadSpec(), client, t.mem.load)
			if err != nil {
				return nil, fmt.Errorf("load QP %d: %w", i, err)
			}
			t.loads = append(t.loads, ep)
		}
	}
	return t, nil
}

func (t *testEndpoints) info() proto.QPInfo {
	in := t.probe.info()
	for _, ep := range t.loads {
		in.Load = append(in.Load, ep.info())
	}
	for _, ep := range t.extra {
		in.QPs = append(in.QPs, ep.info())
	}
	return in
}

// connect connects every QP to its peer; it returns the probe's path MTU.
func (t *testEndpoints) connect(r proto.QPInfo) (int, error) {
	if err := t.checkPeers(r); err != nil {
		return 0, err
	}
	for i, ep := range t.extra {
		if _, err := ep.connect(r.QPs[i]); err != nil {
			return 0, fmt.Errorf("QP %d: %w", i+1, err)
		}
	}
	for i, ep := range t.loads {
		if _, err := ep.connect(r.Load[i]); err != nil {
			return 0, fmt.Errorf("load QP %d: %w", i, err)
		}
	}
	return t.probe.connect(r)
}

func (t *testEndpoints) close() error {
	var errs []error
	for _, ep := range t.loads {
		errs = append(errs, ep.close())
	}
	for _, ep := range t.extra {
		errs = append(errs, ep.close())
	}
	if t.probe != nil {
		errs = append(errs, t.probe.close())
	}
	if t.mem != nil {
		errs = append(errs, t.mem.close())
	}
	if t.lis != nil {
		errs = append(errs, t.lis.close())
	}
	if t.cmch != nil {
		errs = append(errs, t.cmch.Close())
	}
	return errors.Join(errs...)
}

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
// (nil: not pinned).
func startLoad(eps []*endpoint, cpus []int) *loadRun {
	l := &loadRun{eps: eps, errs: make([]error, len(eps))}
	for i, ep := range eps {
		cpu := -1
		if len(cpus) > 0 {
			cpu = cpus[i%len(cpus)]
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.errs[i] = stream(ep.eng, &l.stop, cpu)
		}()
	}
	return l
}

// stream posts until stop, then completes the unsignaled tail.
func stream(eng *verbs.Engine, stop *atomic.Bool, cpu int) error {
	defer runtime.UnlockOSThread()
	if err := lockThread(cpu); err != nil {
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
