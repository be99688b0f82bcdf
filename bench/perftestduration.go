package bench

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// perftest's duration mode (-D) as the drop-in runs it facing perftest:
// perftest runs for -D seconds and counts only the operations completed
// between its margins: from margin seconds after its start to margin
// seconds before its end (its SIGALRM states START, SAMPLE, STOP_SAMPLE,
// END), the margin a quarter of -D in whole seconds unless -f sets it
// (-D 2: none; -D 5: 1 s). The drop-in runs its duration loop for the
// whole -D and takes the same middle from its one-second intervals.

// windowSlack is how late a one-second interval may close and still
// count in perftestWindow.
const windowSlack = 250 * time.Millisecond

// perftestMargin is perftest's margin for a -D of dur without -f: dur/4
// in whole seconds (alarm(2) takes seconds).
func perftestMargin(dur time.Duration) time.Duration {
	return time.Duration(int64(dur.Seconds())/4) * time.Second
}

// perftestWindow is r's figures over the middle of a -D run: the
// intervals that lie between margin and dur-margin (each one second,
// closed where the loop passed its boundary: up to windowSlack late). The
// last one, which the loop closes after its final completions (those it
// waited for after the duration), is left out, as perftest counts nothing
// after its sample ends. ok is false when no interval lies there.
func perftestWindow(r result.Result, dur, margin time.Duration) (w result.Result, ok bool) {
	var ops, from, to int64
	from = -1
	for _, iv := range r.Intervals {
		if iv.StartNS < int64(margin) || iv.EndNS > int64(dur-margin+windowSlack) {
			continue
		}
		if from < 0 {
			from = iv.StartNS
		}
		to = iv.EndNS
		ops += iv.Ops
	}
	if from < 0 || to <= from {
		return r, false
	}
	w = r
	w.Iterations, w.DurationNS = ops, to-from
	w.Bandwidth = result.NewBandwidth(r.SizeBytes, ops, to-from)
	return w, true
}

// perftestReceiveFor is the SEND receiver's -D run facing a perftest
// sender: it receives for s.Duration, as perftest's receiver does on its
// own clock, and counts the messages that arrived between the margins
// (read from the engines between their C calls' polls: each engine's
// count is one aligned 64-bit word the loop writes).
func perftestReceiveFor(engs []*verbs.Engine, s Spec, ep *endpoint) (result.Result, error) {
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
		m := perftestMargin(s.Duration)
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
	r := baseResult(s, ep)
	r.Iterations, r.DurationNS = int64(c1-c0), t1-t0
	r.Bandwidth = result.NewBandwidth(s.Size, r.Iterations, r.DurationNS)
	return r, nil
}
