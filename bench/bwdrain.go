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

// drainMark is where one sender thread (a lane) stood when its C loop
// returned: samples written so far to each of its rings (at), operations
// completed (done) and the engine clock (now). The drainer applies it once
// every sample before it is recorded, so that an interval holds exactly
// its own samples.
type drainMark struct {
	at   []uint64
	done int64
	now  int64
	// last: the test has stopped posting; what follows belongs to the
	// last interval (no boundary closes it before the end)
	last bool
	// fin: the lane's sender is done (senderDone): no marks follow, and
	// the intervals it has not closed wait for it no longer
	fin bool
}

// sampleDrain records the samples of a bandwidth test's senders on its own
// goroutine (its own thread) while the engines' threads stay in the C loop
// and keep their send queues full: the completion-latency histograms, the
// interval histograms and lines, and the progress line. Only the drainer
// touches the histograms, iv and prog until finish returns.
//
// A test has one lane per sender thread (bwPhase): one for the plain and
// bidirectional tests, one per thread of a multi-QP test, each lane with a
// ring per engine. The intervals are the test's, counted once: a lane's
// mark past a boundary closes that interval for the lane, and the interval
// is flushed once every lane has closed it (or stopped), with the
// operations and samples of all lanes, ending when the last lane closed
// it. A lane ahead of another records into the next interval meanwhile
// (open).
type sampleDrain struct {
	lanes []*drainLane
	iv    *intervals
	prog  *progress
	// progLat is what the progress line's percentiles come from: the one
	// engine's histogram, or (several, with a live line) progAll, which
	// records every sample once more
	progLat *hist.Histogram
	progAll bool

	mu       sync.Mutex // guards the lanes' marks and finished
	finished bool
	wake     chan struct{} // a mark or finish: pass now (capacity 1)
	end      chan struct{}

	// the intervals not yet flushed (drainer only; none without
	// intervals): open[0] is interval base, whose samples go to iv.h
	base  int
	open  []*ivBucket
	spare *hist.Histogram // a reset histogram for the next bucket
}

// drainLane is one sender thread's part of a sampleDrain: its rings, one
// per engine, each with its latency histogram.
type drainLane struct {
	d     *sampleDrain
	rings []sampleRing
	lats  []*hist.Histogram
	marks []drainMark // guarded by d.mu

	// drainer only
	r        []uint64 // samples recorded and released, per ring
	lastDone int64
	idx      int   // the interval its samples and operations go to
	next     int64 // its next boundary (engine clock)
	last     bool  // it stopped posting: it closes no more intervals
	fin      bool  // its sender is done: no more marks
}

// ivBucket is an interval that some lane has begun and not every lane has
// closed: its samples (h; nil for open[0], which records into iv.h), its
// operations and the latest close (0: none yet).
type ivBucket struct {
	h   *hist.Histogram
	ops int64
	end int64
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
// tens of milliseconds). With several rings the fastest-filling one sets
// the pace.
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

// startDrain starts the drainer of one sender with one ring (the plain and
// bidirectional tests); mark it through the returned drain.
func startDrain(ring sampleRing, lat *hist.Histogram, iv *intervals, prog *progress) *sampleDrain {
	return startLanes([][]sampleRing{{ring}}, [][]*hist.Histogram{{lat}}, iv, prog)
}

// startLanes starts the drainer of a test's sender threads: lane t's rings
// rings[t], their histograms lats[t]; mark lane t through d.lanes[t]. Every
// ring must be in ring mode, and no C loop running yet.
func startLanes(rings [][]sampleRing, lats [][]*hist.Histogram, iv *intervals, prog *progress) *sampleDrain {
	d := &sampleDrain{iv: iv, prog: prog, progLat: lats[0][0], wake: make(chan struct{}, 1), end: make(chan struct{})}
	n := 0
	for t := range rings {
		d.lanes = append(d.lanes, &drainLane{d: d, rings: rings[t], lats: lats[t], r: make([]uint64, len(rings[t])), next: iv.next})
		n += len(rings[t])
	}
	if n > 1 && prog != nil && prog.w != nil {
		d.progLat, d.progAll = hist.New(), true
	}
	if iv.h != nil {
		d.open = []*ivBucket{{}}
	}
	go d.run()
	return d
}

// mark queues a mark of the only lane (startDrain).
func (d *sampleDrain) mark(done int64, now int64, last bool) { d.lanes[0].mark(done, now, last) }

// mark queues a mark; call it from the lane's measuring goroutine after
// each return of its C loop and before the next call.
func (l *drainLane) mark(done int64, now int64, last bool) {
	at := make([]uint64, len(l.rings))
	for k, r := range l.rings {
		at[k] = r.RingWritten()
	}
	l.d.mu.Lock()
	l.marks = append(l.marks, drainMark{at: at, done: done, now: now, last: last})
	l.d.mu.Unlock()
	l.d.poke()
}

// senderDone tells the drainer that the lane's sender is done (bwPhase
// returned): the intervals other lanes close need not wait for it.
func (l *drainLane) senderDone() {
	l.d.mu.Lock()
	l.marks = append(l.marks, drainMark{fin: true})
	l.d.mu.Unlock()
	l.d.poke()
}

// senderDone: the only lane's sender is done (startDrain).
func (d *sampleDrain) senderDone() { d.lanes[0].senderDone() }

// poke wakes the drainer for a pass now.
func (d *sampleDrain) poke() {
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// finish waits until every sample up to the last marks is recorded and the
// drainer has stopped. Call it once the C loops have returned for the last
// time (and mark after that return, if its samples belong to the result).
// The last interval stays in iv (iv.ops, iv.h) for the caller's flush.
func (d *sampleDrain) finish() {
	d.mu.Lock()
	d.finished = true
	d.mu.Unlock()
	d.poke()
	<-d.end
}

func (d *sampleDrain) run() {
	defer close(d.end)
	sleep, last := drainPoll, time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ws := make([][]uint64, len(d.lanes))
	marks := make([][]drainMark, len(d.lanes))
	for {
		// w first, then the marks: a mark placed before the samples that
		// follow it in the ring is seen together with them
		for t, l := range d.lanes {
			ws[t] = ws[t][:0]
			for _, r := range l.rings {
				ws[t] = append(ws[t], r.RingWritten())
			}
		}
		d.mu.Lock()
		for t, l := range d.lanes {
			marks[t], l.marks = l.marks, nil
		}
		finished := d.finished
		d.mu.Unlock()
		var n uint64 // the most samples one ring gave this pass
		for t, l := range d.lanes {
			n = max(n, d.drainTo(l, ws[t], marks[t]))
		}
		d.flushClosed(false)
		if finished {
			d.flushClosed(true) // marks taken with finished set include the last ones
			return
		}
		// the C loop may not return for the whole test (iterations, no
		// intervals): the progress line is the drainer's to keep live. Only
		// then does a pass read the clock: verbs.Now is a cgo call, and each
		// cgo call or syscall wakes the Go runtime's sysmon thread from its
		// deep sleep (for a few dozen wake-ups before it sleeps again) on
		// the CPU the engine thread polls on
		if d.prog.w != nil {
			d.prog.update(verbs.Now(), d.completedNow(), d.progLat)
		}
		now := time.Now()
		sleep = drainSleep(n, now.Sub(last), sleep, d.lanes[0].rings[0].Capacity(), d.sleepCeil())
		last = now
		timer.Reset(sleep)
		select {
		case <-timer.C:
		case <-d.wake:
			timer.Stop()
		}
	}
}

// completedNow is the operations completed so far, every ring's engine
// together (read atomically while the C loops run).
func (d *sampleDrain) completedNow() int64 {
	var n uint64
	for _, l := range d.lanes {
		for _, r := range l.rings {
			n += r.CompletedNow()
		}
	}
	return int64(n)
}

// done is the operations of the marks applied so far, all lanes together.
func (d *sampleDrain) done() int64 {
	var n int64
	for _, l := range d.lanes {
		n += l.lastDone
	}
	return n
}

// drainTo records lane l's samples up to w (per ring), applying each mark
// when the samples before it are recorded; it returns the most samples one
// ring gave.
func (d *sampleDrain) drainTo(l *drainLane, w []uint64, marks []drainMark) uint64 {
	got := make([]uint64, len(l.rings))
	for _, m := range marks {
		if m.fin {
			l.fin = true
			d.flushClosed(false)
			continue
		}
		for k := range l.rings {
			got[k] += d.record(l, k, m.at[k])
		}
		if d.iv.h != nil {
			d.bucket(l.idx).ops += m.done - l.lastDone
			if m.last {
				l.last = true
			}
			// a mark past a boundary closes the lane's interval (past
			// several: the first holds what the lane did meanwhile)
			for !l.last && l.next <= m.now {
				b := d.bucket(l.idx)
				b.end = max(b.end, m.now)
				l.idx++
				l.next += int64(d.iv.every)
			}
			d.flushClosed(false)
		}
		l.lastDone = m.done
		d.prog.update(m.now, d.done(), d.progLat)
	}
	var n uint64
	for k := range l.rings {
		got[k] += d.record(l, k, max(w[k], l.r[k]))
		n = max(n, got[k])
	}
	return n
}

// record records lane l's ring k up to to, releases the slots and returns
// how many it recorded.
func (d *sampleDrain) record(l *drainLane, k int, to uint64) uint64 {
	ring, lat := l.rings[k], l.lats[k]
	var h *hist.Histogram
	if d.iv.h != nil {
		if h = d.bucket(l.idx).h; h == nil {
			h = d.iv.h
		}
	}
	from, r := l.r[k], l.r[k]
	for r < to {
		s := ring.RingSamples(r, to)
		lat.RecordSlice(s, 0)
		if h != nil {
			h.RecordSlice(s, d.iv.shift)
		}
		if d.progAll {
			d.progLat.RecordSlice(s, 0)
		}
		r += uint64(len(s))
		ring.RingRelease(r)
	}
	l.r[k] = r
	return r - from
}

// bucket is interval idx (idx >= base: a lane's interval is flushed only
// once the lane closed it), opened if need be.
func (d *sampleDrain) bucket(idx int) *ivBucket {
	for len(d.open) <= idx-d.base {
		h := d.spare
		if h == nil {
			h = hist.New()
		}
		d.spare = nil
		d.open = append(d.open, &ivBucket{h: h})
	}
	return d.open[idx-d.base]
}

// flushClosed flushes the intervals every lane has closed, in order. At
// the end (all) it flushes every interval some lane closed, and the last
// one's samples and operations stay in iv for the caller's flush.
func (d *sampleDrain) flushClosed(all bool) {
	for d.iv.h != nil && len(d.open) > 0 {
		b := d.open[0]
		if len(d.open) == 1 && all {
			d.iv.ops += b.ops
			b.ops = 0
			return
		}
		if !all && !d.closedByAll(d.base, b) {
			return
		}
		if b.end == 0 { // at the end, one no lane closed: it joins the next
			nb := d.open[1]
			nb.ops += b.ops
			d.iv.h.Merge(nb.h)
			nb.h.Reset()
			d.spare, nb.h = nb.h, nil
			d.open = d.open[1:]
			d.base++
			continue
		}
		d.iv.ops += b.ops
		d.iv.flush(b.end)
		d.open = d.open[1:]
		d.base++
		if len(d.open) == 0 {
			d.open = append(d.open, &ivBucket{})
		} else if nb := d.open[0]; nb.h != nil {
			d.iv.h.Merge(nb.h)
			nb.h.Reset()
			d.spare, nb.h = nb.h, nil
		}
	}
}

// closedByAll reports whether interval idx is closed: some lane closed it
// (b.end), and every lane did or has no more marks to give (fin).
func (d *sampleDrain) closedByAll(idx int, b *ivBucket) bool {
	if b.end == 0 {
		return false
	}
	for _, l := range d.lanes {
		if l.idx <= idx && !l.fin {
			return false
		}
	}
	return true
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
// thread: one engine (the plain and bidirectional tests), the engines of
// one thread of a multi-QP test (multiSender), or the TCP baseline's
// socket engine (tcpSender).
type bwSender interface {
	// step runs the C loop until until (engine clock), the targets, or a
	// sample buffer the drainer has not caught up with (full)
	step(until int64) (full bool, err error)
	completed() uint64 // operations completed, all engines together
	done() bool        // every engine completed its target
	stopPosting()      // the target: what is posted, plus one signaled operation per engine
	waitRoom() error   // after full: until the drainer freed half of each ring
}

// bwMarker is where bwPhase reports each return of the C loop: a lane of a
// sampleDrain (the samples are in the engines' rings, recorded on the
// drainer's thread) or a bufDrain (the TCP baseline: recorded at the mark).
type bwMarker interface {
	mark(done, now int64, last bool)
	senderDone() // bwPhase returned: every target complete
}

// bwPhase is the measured phase of a bandwidth sender, the one loop of the
// plain, bidirectional, multi-QP (one per thread) and TCP tests: it enters
// the C loop until the next interval boundary (every, from nextIv; none
// when nextIv is math.MaxInt64) or deadline, marks each return (the
// drainer records the samples meanwhile, on its own thread) and, past
// deadline, stops posting and completes the unsignaled tail, which belongs
// to the last interval. It returns when every target is complete.
func bwPhase(snd bwSender, drain bwMarker, nextIv, deadline int64, every time.Duration) error {
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
	drain.senderDone()
	return nil
}

// warmTarget is each engine's target for a bandwidth warm-up: s.Warmup
// operations, or open-ended for --warmup-time (bwWarmup stops it).
func warmTarget(s Spec) uint64 {
	if s.WarmupTime > 0 {
		return math.MaxUint64
	}
	return uint64(s.Warmup)
}

// bwWarmup runs a bandwidth sender's warm-up before its measured phase, its
// targets set (warmTarget): until they are complete or, with
// --warmup-time, for that long and then the unsignaled tails. snd's step
// must drop the samples before each C call (none are recorded; a full
// buffer only ends the call).
func bwWarmup(snd bwSender, s Spec) error {
	far := int64(math.MaxInt64)
	until := far
	if s.WarmupTime > 0 {
		until = verbs.Now() + int64(s.WarmupTime)
	}
	for !snd.done() {
		if _, err := snd.step(until); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if until != far && verbs.Now() >= until {
			until = far // complete the unsignaled tails
			snd.stopPosting()
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
