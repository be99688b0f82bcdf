package measure

import (
	"fmt"
	"math"
	"time"

	"github.com/rdmabench/rdmabench/bench/drain"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// SampleRing is the ring of an engine in ring mode, as the drainer reads
// it (bench/drain).
type SampleRing = drain.Ring

var _ SampleRing = (*verbs.Engine)(nil)

// StartDrain starts the drainer of one sender with one ring (the plain and
// bidirectional tests); mark it through d.Lane(0).
func StartDrain(ring SampleRing, lat *hist.Histogram, iv *Intervals, prog *Progress) *drain.Drain {
	return StartLanes([][]SampleRing{{ring}}, [][]*hist.Histogram{{lat}}, iv, prog)
}

// StartLanes starts the drainer of a test's sender threads (lane t: rings
// rings[t], their histograms lats[t]), feeding iv and prog: the samples go
// to the rings, which the drainer records from its own goroutine while the
// threads stay in the C loop (recording a full buffer on the loop's thread
// would stop posting long enough to empty the send queue of a fast NIC).
// The drainer owns iv and prog until Finish.
func StartLanes(rings [][]SampleRing, lats [][]*hist.Histogram, iv *Intervals, prog *Progress) *drain.Drain {
	return drain.Start(drain.Config{Rings: rings, Lats: lats, IntervalHist: iv.h, Shift: iv.shift, Next: iv.Next, Every: iv.Every,
		Close:    func(ops, end int64) { iv.ops += ops; iv.Flush(end) },
		Last:     func(ops int64) { iv.ops += ops },
		Progress: prog.Update, Live: prog.W != nil, Clock: verbs.Now})
}

// WaitRoom waits until the drainer has freed half of eng's ring (after
// BWClient returned full: the drainer fell a whole ring behind), for at
// most EngineTimeout.
func WaitRoom(eng *verbs.Engine) error {
	deadline := time.Now().Add(endpoint.EngineTimeout)
	for eng.RingRoom() < uint64(eng.Capacity()/2) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the sample drainer freed no room in %v (%d samples behind)", endpoint.EngineTimeout, uint64(eng.Capacity())-eng.RingRoom())
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// BWSender is what the bandwidth phase loop (BWPhase) drives on one
// thread: one engine (the plain and bidirectional tests), the engines of
// one thread of a multi-QP test (multiSender), or the TCP baseline's
// socket engine (tcpSender).
type BWSender interface {
	// Step runs the C loop until until (engine clock), the targets, or a
	// sample buffer the drainer has not caught up with (full)
	Step(until int64) (full bool, err error)
	Completed() uint64 // operations completed, all engines together
	Done() bool        // every engine completed its target
	StopPosting()      // the target: what is posted, plus one signaled operation per engine
	WaitRoom() error   // after full: until the drainer freed half of each ring
}

// BWMarker is where BWPhase reports each return of the C loop: a lane of a
// drain.Drain (the samples are in the engines' rings, recorded on the
// drainer's thread) or a bufDrain (the TCP baseline: recorded at the mark).
type BWMarker interface {
	Mark(done, now int64, last bool)
	SenderDone() // BWPhase returned: every target complete
}

// BWPhase is the measured phase of a bandwidth sender, the one loop of the
// plain, bidirectional, multi-QP (one per thread) and TCP tests: it enters
// the C loop until the next interval boundary (every, from nextIv; none
// when nextIv is math.MaxInt64) or deadline, marks each return (the
// drainer records the samples meanwhile, on its own thread) and, past
// deadline, stops posting and completes the unsignaled tail, which belongs
// to the last interval. It returns when every target is complete.
func BWPhase(snd BWSender, drain BWMarker, nextIv, deadline int64, every time.Duration) error {
	finishing := false
	for !snd.Done() {
		until := min(nextIv, deadline)
		if finishing {
			until = math.MaxInt64
		}
		full, err := snd.Step(until)
		if err != nil {
			return err
		}
		now := verbs.Now()
		if !finishing && now >= deadline {
			snd.StopPosting()
			finishing = true
			nextIv = math.MaxInt64
		}
		for nextIv <= now {
			nextIv += int64(every)
		}
		drain.Mark(int64(snd.Completed()), now, finishing)
		if full {
			if err := snd.WaitRoom(); err != nil {
				return err
			}
		}
	}
	drain.SenderDone()
	return nil
}

// WarmTarget is each engine's target for a bandwidth warm-up: s.Warmup
// operations, or open-ended for --warmup-time (BWWarmup stops it).
func WarmTarget(s spec.Spec) uint64 {
	if s.WarmupTime > 0 {
		return math.MaxUint64
	}
	return uint64(s.Warmup)
}

// BWWarmup runs a bandwidth sender's warm-up before its measured phase, its
// targets set (WarmTarget): until they are complete or, with
// --warmup-time, for that long and then the unsignaled tails. snd's step
// must drop the samples before each C call (none are recorded; a full
// buffer only ends the call).
func BWWarmup(snd BWSender, s spec.Spec) error {
	far := int64(math.MaxInt64)
	until := far
	if s.WarmupTime > 0 {
		until = verbs.Now() + int64(s.WarmupTime)
	}
	for !snd.Done() {
		if _, err := snd.Step(until); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if until != far && verbs.Now() >= until {
			until = far // complete the unsignaled tails
			snd.StopPosting()
		}
	}
	return nil
}

// EngSender is one engine as a BWSender; run is its C loop (BWClient, or
// BidirSend for a bidirectional SEND side).
type EngSender struct {
	eng    *verbs.Engine
	target uint64
	run    func(until int64) (bool, error)
}

func NewEngSender(eng *verbs.Engine, target uint64, run func(int64) (bool, error)) *EngSender {
	eng.SetTarget(target)
	if run == nil {
		run = eng.BWClient
	}
	return &EngSender{eng: eng, target: target, run: run}
}

func (e *EngSender) Step(until int64) (bool, error) { return e.run(until) }
func (e *EngSender) Completed() uint64              { return e.eng.Completed() }
func (e *EngSender) Done() bool                     { return e.eng.Completed() >= e.target }
func (e *EngSender) WaitRoom() error                { return WaitRoom(e.eng) }
func (e *EngSender) StopPosting() {
	e.target = e.eng.Posted() + 1
	e.eng.SetTarget(e.target)
}
