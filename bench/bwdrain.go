package bench

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// sampleRing is the ring side of a bandwidth sender in ring mode
// (verbs.Engine.SetRing): what the drainer reads while the C loop runs.
type sampleRing interface {
	RingWritten() uint64
	RingSamples(from, to uint64) []uint64
	RingRelease(to uint64)
	CompletedNow() uint64
	Capacity() int // samples the ring holds
}

var _ sampleRing = (*verbs.Engine)(nil)

// drainMark is where the measuring goroutine stood when the C loop
// returned: samples written so far (at), operations completed (done) and
// the engine clock (now). The drainer applies it once every sample before
// it is recorded, so that an interval holds exactly its own samples.
type drainMark struct {
	at   uint64
	done int64
	now  int64
	// last: the test has stopped posting; what follows belongs to the
	// last interval (no boundary closes it before the end)
	last bool
}

// sampleDrain records a bandwidth sender's samples on its own goroutine
// (its own thread) while the engine's thread stays in the C loop and keeps
// the send queue full: the completion-latency histogram, the interval
// histograms and lines, and the progress line. Only the drainer touches
// lat, iv and prog until finish returns.
type sampleDrain struct {
	ring sampleRing
	lat  *hist.Histogram
	iv   *intervals
	prog *progress

	mu       sync.Mutex
	marks    []drainMark
	finished bool
	wake     chan struct{} // a mark or finish: pass now (capacity 1)
	end      chan struct{}
	lastDone int64
}

// drainPoll and drainPollMax bound the drainer's sleep between passes. It
// sleeps as long as the engine takes, at the rate the last pass saw, to fill
// a quarter of the ring (doubling the sleep after a pass that found
// nothing): a 64 Ki-sample ring at 3 M signaled completions per second
// (400 Gb/s of 16 KiB messages) gets a pass every 5 ms, far ahead of the
// 20 ms it takes to fill, while a slow link (a few hundred completions per
// second) gets one a second (every progressEvery while a progress line is
// live). A mark (each return of the C loop: an interval's end, a full
// ring) and finish wake it at once, so interval lines and the result do
// not wait for a sleep. Each wake-up takes a CPU from somewhere: on a small
// host, from the sender's own loop (the Go runtime wakes a thread or two
// for each timer, and the woken thread preempts the busy-polling engine
// thread where they share a CPU) or from the NIC's interrupts (a software
// RDMA device's whole data path).
//
// The sleep grows at most fourfold from one pass to the next (a rate seen
// early, before the loop is up to speed, does not buy a long sleep at
// once), and a pass that found nothing doubles it only up to drainIdleMax
// (the link may be about to start: a small ring at a high rate fills in
// tens of milliseconds).
const (
	drainPoll    = time.Millisecond
	drainPollMax = time.Second
	drainIdleMax = 50 * time.Millisecond
)

// drainSleep is the sleep after a pass that recorded n samples in dt, the
// last sleep having been prev, for a ring of capacity samples, at most
// ceil.
func drainSleep(n uint64, dt, prev time.Duration, capacity int, ceil time.Duration) time.Duration {
	if n == 0 {
		return max(min(2*prev, drainIdleMax, ceil), drainPoll)
	}
	fill := time.Duration(float64(dt) * float64(capacity/4) / float64(n))
	return min(max(fill, drainPoll), 4*prev, ceil)
}

// sleepCeil is the drainer's longest sleep: drainPollMax, or progressEvery
// while a progress line is live (the drainer keeps it up to date).
func (d *sampleDrain) sleepCeil() time.Duration {
	if d.prog != nil && d.prog.w != nil {
		return min(progressEvery, drainPollMax)
	}
	return drainPollMax
}

func startDrain(ring sampleRing, lat *hist.Histogram, iv *intervals, prog *progress) *sampleDrain {
	d := &sampleDrain{ring: ring, lat: lat, iv: iv, prog: prog, wake: make(chan struct{}, 1), end: make(chan struct{})}
	go d.run()
	return d
}

// mark queues a mark; call it from the measuring goroutine after each
// return of the C loop and before the next call.
func (d *sampleDrain) mark(done int64, now int64, last bool) {
	at := d.ring.RingWritten()
	d.mu.Lock()
	d.marks = append(d.marks, drainMark{at: at, done: done, now: now, last: last})
	d.mu.Unlock()
	d.poke()
}

// poke wakes the drainer for a pass now.
func (d *sampleDrain) poke() {
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// finish waits until every sample up to the last mark is recorded and the
// drainer has stopped. Call it once the C loop has returned for the last
// time (and mark after that return, if its samples belong to the result).
func (d *sampleDrain) finish() {
	d.mu.Lock()
	d.finished = true
	d.mu.Unlock()
	d.poke()
	<-d.end
}

func (d *sampleDrain) run() {
	defer close(d.end)
	var r uint64 // samples recorded and released
	sleep, last := drainPoll, time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// w first, then the marks: a mark placed before the samples that
		// follow it in the ring is seen together with them
		w := d.ring.RingWritten()
		d.mu.Lock()
		marks, finished := d.marks, d.finished
		d.marks = nil
		d.mu.Unlock()
		before := r
		r = d.drainTo(r, w, marks)
		if finished {
			return // marks taken with finished set include the last one
		}
		// the C loop may not return for the whole test (iterations, no
		// intervals): the progress line is the drainer's to keep live. Only
		// then does a pass read the clock: verbs.Now is a cgo call, and each
		// cgo call or syscall wakes the Go runtime's sysmon thread from its
		// deep sleep (for a few dozen wake-ups before it sleeps again) on
		// the CPU the engine thread polls on
		if d.prog.w != nil {
			d.prog.update(verbs.Now(), int64(d.ring.CompletedNow()), d.lat)
		}
		now := time.Now()
		sleep = drainSleep(r-before, now.Sub(last), sleep, d.ring.Capacity(), d.sleepCeil())
		last = now
		timer.Reset(sleep)
		select {
		case <-timer.C:
		case <-d.wake:
			timer.Stop()
		}
	}
}

// drainTo records samples r..w, applying each mark when the samples before
// it are recorded, and returns the new read position.
func (d *sampleDrain) drainTo(r, w uint64, marks []drainMark) uint64 {
	for _, m := range marks {
		r = d.record(r, m.at)
		if m.last {
			d.iv.next = math.MaxInt64
		}
		d.iv.add(nil, m.done-d.lastDone, m.now)
		d.prog.update(m.now, m.done, d.lat)
		d.lastDone = m.done
	}
	return d.record(r, max(w, r))
}

// record records samples r..to and releases their slots.
func (d *sampleDrain) record(r, to uint64) uint64 {
	for r < to {
		s := d.ring.RingSamples(r, to)
		d.lat.RecordSlice(s, 0)
		d.iv.record(s)
		r += uint64(len(s))
		d.ring.RingRelease(r)
	}
	return r
}

// waitRoom waits until the drainer has freed half of eng's ring (after
// BWClient returned full: the drainer fell a whole ring behind), for at
// most EngineTimeout.
func waitRoom(eng *verbs.Engine) error {
	deadline := time.Now().Add(EngineTimeout)
	for eng.RingRoom() < uint64(eng.Capacity()/2) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the sample drainer freed no room in %v (%d samples behind)", EngineTimeout, uint64(eng.Capacity())-eng.RingRoom())
		}
		time.Sleep(drainPoll)
	}
	return nil
}

// bwSender is what the bandwidth phase loop (bwPhase) drives on one
// thread: one engine (the plain and bidirectional tests; a multi-QP
// test's thread's engines could be one), its samples going to a ring a
// sampleDrain records.
type bwSender interface {
	// step runs the C loop until until (engine clock), the targets, or a
	// ring the drainer has not caught up with (full)
	step(until int64) (full bool, err error)
	completed() uint64 // operations completed, all engines together
	done() bool        // every engine completed its target
	stopPosting()      // the target: what is posted, plus one signaled operation per engine
	waitRoom() error   // after full: until the drainer freed half of each ring
}

// bwPhase is the measured phase of a bandwidth sender, the one loop of the
// plain and bidirectional tests: it enters the C loop until the
// next interval boundary (every, from nextIv; none when nextIv is
// math.MaxInt64) or deadline, marks each return for the drainer (which
// records the samples meanwhile, on its own thread) and, past deadline,
// stops posting and completes the unsignaled tail, which belongs to the
// last interval. It returns when every target is complete.
func bwPhase(snd bwSender, drain *sampleDrain, nextIv, deadline int64, every time.Duration) error {
	finishing := false
	for !snd.done() {
		until := min(nextIv, deadline)
		if finishing {
			until = math.MaxInt64
		}
		full, err := snd.step(until)
		if err != nil {
			return err
		}
		now := verbs.Now()
		if !finishing && now >= deadline {
			snd.stopPosting()
			finishing = true
			nextIv = math.MaxInt64
		}
		for nextIv <= now {
			nextIv += int64(every)
		}
		drain.mark(int64(snd.completed()), now, finishing)
		if full {
			if err := snd.waitRoom(); err != nil {
				return err
			}
		}
	}
	return nil
}

// engSender is one engine as a bwSender; run is its C loop (BWClient, or
// BidirSend for a bidirectional SEND side).
type engSender struct {
	eng    *verbs.Engine
	target uint64
	run    func(until int64) (bool, error)
}

func newEngSender(eng *verbs.Engine, target uint64, run func(int64) (bool, error)) *engSender {
	eng.SetTarget(target)
	if run == nil {
		run = eng.BWClient
	}
	return &engSender{eng: eng, target: target, run: run}
}

func (e *engSender) step(until int64) (bool, error) { return e.run(until) }
func (e *engSender) completed() uint64              { return e.eng.Completed() }
func (e *engSender) done() bool                     { return e.eng.Completed() >= e.target }
func (e *engSender) waitRoom() error                { return waitRoom(e.eng) }
func (e *engSender) stopPosting() {
	e.target = e.eng.Posted() + 1
	e.eng.SetTarget(e.target)
}
