package peer

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// perftest's duration mode (-D) as the drop-in runs it facing perftest:
// perftest's margins and sample window are bench/perftest's Margin and
// Window.

// dropInReceiveFor is the SEND receiver's -D run facing a perftest
// sender: it receives for s.Duration, as perftest's receiver does on its
// own clock, and counts the messages that arrived between the margins
// (read from the engines between their C calls' polls: each engine's
// count is one aligned 64-bit word the loop writes).
func dropInReceiveFor(engs []*verbs.Engine, s spec.Spec, ep *endpoint.Endpoint) (result.Result, error) {
	var timeUp atomic.Bool
	count := func() (n uint64) {
		for _, e := range engs {
			n += e.Iterations()
		}
		return n
	}
	for _, e := range engs {
		e.SetStop(math.MaxInt64)
	}
	var c0, c1 uint64
	var t0, t1 int64
	stop, done := make(chan struct{}), make(chan struct{})
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-stop:
			return false
		}
	}
	go func() {
		defer close(done)
		m := perftest.Margin(s.Duration)
		if !wait(m) {
			return
		}
		c0, t0 = count(), verbs.Now()
		if !wait(s.Duration - 2*m) {
			return
		}
		c1, t1 = count(), verbs.Now()
		if !wait(m) {
			return
		}
		timeUp.Store(true)
		for _, e := range engs {
			e.Abort()
		}
	}()
	_, err := verbs.BWServerMulti(engs)
	close(stop)
	<-done
	if err != nil && !(errors.Is(err, verbs.ErrAborted) && timeUp.Load()) {
		return result.Result{}, err
	}
	if err == nil { // every engine reached its stop count: impossible short of 2^63 messages
		return result.Result{}, errors.New("the receiver stopped before the duration")
	}
	r := measure.BaseResult(s, ep)
	r.Iterations, r.DurationNS = int64(c1-c0), t1-t0
	r.Bandwidth = result.NewBandwidth(s.Size, r.Iterations, r.DurationNS)
	return r, nil
}

// latStopGrace is how long after its own -D a ping-pong side waits for a
// perftest peer that stopped first (verbs.CutLoop).
const latStopGrace = 250 * time.Millisecond

// dropInLat runs a timed latency side facing perftest: s.Iters
// iterations, or with -D the duration (dropInLatFor), whose
// #iterations and span are then, with a margin (-D 4 and longer), those
// of the engine's count read at the margins on this side's clock, as
// perftest counts its sample window (the histogram keeps every sample).
func dropInLat(eng measure.LatEngine, ep *endpoint.Endpoint, s spec.Spec, o measure.Options) (result.Result, error) {
	if s.Duration <= 0 {
		r, _, err := measure.Lat(eng, measure.BaseResult(s, ep), s, o)
		return r, err
	}
	wc := perftest.CountWindow(ep.Eng.Iterations, s.Duration, perftest.Margin(s.Duration))
	r, err := dropInLatFor(eng, ep.Eng.Abort, ep.Eng.ResetAbort, measure.BaseResult(s, ep), s, o)
	if ops, span, ok := wc.Stop(); err == nil && ok && perftest.Margin(s.Duration) > 0 {
		r.Iterations, r.DurationNS = int64(ops), span.Nanoseconds()
		r.Bandwidth = result.NewBandwidth(s.Size, r.Iterations, r.DurationNS)
	}
	return r, err
}

// dropInLatFor is a latency side's -D run facing perftest, ended by
// abort latStopGrace after s.Duration where the peer stopped first
// (reset clears the abort). The #iterations are the samples, the span
// ends at the last round trip.
func dropInLatFor(eng measure.LatEngine, abort, reset func(), base result.Result, s spec.Spec, o measure.Options) (result.Result, error) {
	d := &verbs.CutLoop{LatLoop: eng}
	t := time.AfterFunc(s.Duration+latStopGrace, func() { d.TimeUp(); abort() })
	r, _, err := measure.Lat(d, base, s, o)
	if !t.Stop() {
		reset()
	}
	if err == nil && d.Cut {
		r.Iterations, r.DurationNS = r.Samples, max(r.DurationNS-d.Idle, 1)
		r.Bandwidth = result.NewBandwidth(s.Size, r.Iterations, r.DurationNS)
	}
	return r, err
}
