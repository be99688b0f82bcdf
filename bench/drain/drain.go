// Package drain records the samples of a bandwidth test's senders on its
// own goroutine (its own thread) while the senders' threads stay in their C
// loops and keep their send queues full: each engine writes a completion's
// latency into a ring in C memory (verbs.Engine in ring mode), and the
// drainer records the rings into the histograms, the test's intervals and
// the progress line.
//
// A test has one lane per sender thread: one for the plain and
// bidirectional tests, one per thread of a multi-QP test, each lane with a
// ring per engine. The sender marks each return of its C loop
// (Lane.Mark). The intervals are the test's, counted once: a lane's mark
// past a boundary closes that interval for the lane, and the interval is
// closed (Config.Close) once every lane has closed it (or its sender is
// done), with the operations and samples of all lanes, ending when the
// last lane closed it. A lane ahead of another records into the next
// interval meanwhile.
//
// The package is pure Go: the engine clock comes in Config.Clock.
package drain

import (
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/hist"
)

// Ring is the ring side of a bandwidth sender in ring mode
// (verbs.Engine.SetRing): what the drainer reads while the C loop runs.
type Ring interface {
	RingWritten() uint64
	RingSamples(from, to uint64) []uint64
	RingRelease(to uint64)
	CompletedNow() uint64
	Capacity() int // samples the ring holds
}

// Config is what a Drain records and where to. Only the drainer touches
// the histograms and calls the functions until Finish returns.
type Config struct {
	Rings [][]Ring            // lane t's rings, one per engine
	Lats  [][]*hist.Histogram // their completion-latency histograms
	// The test's intervals: IntervalHist gets the current interval's
	// samples (recorded with Shift), nil when there are no intervals; the
	// first boundary is Next (engine clock, ns), the others Every apart.
	// Close ends the current interval at end with ops more operations
	// (its samples are in IntervalHist); at Finish, Last gets the last
	// interval's operations, which stays open for the caller.
	IntervalHist *hist.Histogram
	Shift        uint
	Next         int64
	Every        time.Duration
	Close        func(ops, end int64)
	Last         func(ops int64)
	// Progress is called with the engine clock, the operations done and
	// the histogram of the progress line's percentiles at each mark, and,
	// when Live (a line on a terminal), on each pass.
	Progress func(now, done int64, h *hist.Histogram)
	Live     bool
	Clock    func() int64 // the engine clock, ns
}

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
	// fin: the lane's sender is done (SenderDone): no marks follow, and
	// the intervals it has not closed wait for it no longer
	fin bool
}

// Drain is a running drainer (Start): see the package comment.
type Drain struct {
	lanes []*Lane
	c     Config
	// progLat is what the progress line's percentiles come from: the one
	// engine's histogram, or (several, with a live line) progAll, which
	// records every sample once more
	progLat *hist.Histogram
	progAll bool

	mu       sync.Mutex // guards the lanes' marks and finished
	finished bool
	wake     chan struct{} // a mark or finish: pass now (capacity 1)
	end      chan struct{}

	// the intervals not yet closed (drainer only; none without
	// intervals): open[0] is interval base, whose samples go to
	// c.IntervalHist
	base    int
	open    []*ivBucket
	spare   *hist.Histogram // a reset histogram for the next bucket
	lastEnd int64           // the end of the last interval closed with operations
}

// Lane is one sender thread's part of a Drain: its rings, one
// per engine, each with its latency histogram.
type Lane struct {
	d     *Drain
	rings []Ring
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
// closed: its samples (h; nil for open[0], which records into
// Config.IntervalHist), its
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
// second) gets one a second (every LiveEvery while a progress line is
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

// LiveEvery is how often the drainer passes at most while a progress line
// is live (Config.Live): it keeps the line up to date.
const LiveEvery = 250 * time.Millisecond

// sleepCeil is the drainer's longest sleep: drainPollMax, or LiveEvery
// while a progress line is live.
func (d *Drain) sleepCeil() time.Duration {
	if d.c.Live {
		return min(LiveEvery, drainPollMax)
	}
	return drainPollMax
}

// Start starts the drainer of a test's sender threads: lane t (d.Lane(t))
// has rings c.Rings[t], their histograms c.Lats[t]. Every ring must be in
// ring mode, and no C loop running yet.
func Start(c Config) *Drain {
	d := &Drain{c: c, progLat: c.Lats[0][0], wake: make(chan struct{}, 1), end: make(chan struct{})}
	n := 0
	for t := range c.Rings {
		d.lanes = append(d.lanes, &Lane{d: d, rings: c.Rings[t], lats: c.Lats[t], r: make([]uint64, len(c.Rings[t])), next: c.Next})
		n += len(c.Rings[t])
	}
	if n > 1 && c.Live {
		d.progLat, d.progAll = hist.New(), true
	}
	if c.IntervalHist != nil {
		d.open = []*ivBucket{{}}
	}
	go d.run()
	return d
}

// Lane is lane t.
func (d *Drain) Lane(t int) *Lane { return d.lanes[t] }

// Mark queues a mark: the operations done and the engine clock when the
// lane's C loop returned, and whether the test has stopped posting (last:
// what follows belongs to the last interval). Call it from the lane's
// measuring goroutine after each return of its C loop and before the next
// call.
func (l *Lane) Mark(done int64, now int64, last bool) {
	at := make([]uint64, len(l.rings))
	for k, r := range l.rings {
		at[k] = r.RingWritten()
	}
	l.d.mu.Lock()
	l.marks = append(l.marks, drainMark{at: at, done: done, now: now, last: last})
	l.d.mu.Unlock()
	l.d.poke()
}

// SenderDone tells the drainer that the lane's sender is done (its phase
// loop returned): the intervals other lanes close need not wait for it.
func (l *Lane) SenderDone() {
	l.d.mu.Lock()
	l.marks = append(l.marks, drainMark{fin: true})
	l.d.mu.Unlock()
	l.d.poke()
}

// poke wakes the drainer for a pass now.
func (d *Drain) poke() {
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Finish waits until every sample up to the last marks is recorded and the
// drainer has stopped. Call it once the C loops have returned for the last
// time (and mark after that return, if its samples belong to the result).
// The last interval stays open (Config.Last) for the caller to close.
func (d *Drain) Finish() {
	d.mu.Lock()
	d.finished = true
	d.mu.Unlock()
	d.poke()
	<-d.end
}

func (d *Drain) run() {
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
		if d.c.Live {
			d.c.Progress(d.c.Clock(), d.completedNow(), d.progLat)
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
func (d *Drain) completedNow() int64 {
	var n uint64
	for _, l := range d.lanes {
		for _, r := range l.rings {
			n += r.CompletedNow()
		}
	}
	return int64(n)
}

// done is the operations of the marks applied so far, all lanes together.
func (d *Drain) done() int64 {
	var n int64
	for _, l := range d.lanes {
		n += l.lastDone
	}
	return n
}

// drainTo records lane l's samples up to w (per ring), applying each mark
// when the samples before it are recorded; it returns the most samples one
// ring gave.
func (d *Drain) drainTo(l *Lane, w []uint64, marks []drainMark) uint64 {
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
		if d.c.IntervalHist != nil {
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
				l.next += int64(d.c.Every)
			}
			d.flushClosed(false)
		}
		l.lastDone = m.done
		if d.c.Progress != nil {
			d.c.Progress(m.now, d.done(), d.progLat)
		}
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
func (d *Drain) record(l *Lane, k int, to uint64) uint64 {
	ring, lat := l.rings[k], l.lats[k]
	var h *hist.Histogram
	if d.c.IntervalHist != nil {
		if h = d.bucket(l.idx).h; h == nil {
			h = d.c.IntervalHist
		}
	}
	from, r := l.r[k], l.r[k]
	for r < to {
		s := ring.RingSamples(r, to)
		lat.RecordSlice(s, 0)
		if h != nil {
			h.RecordSlice(s, d.c.Shift)
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

// bucket is interval idx, opened if need be. A lane's interval is closed
// only once the lane closed it, but for a lane whose sender is done (fin):
// it has nothing more to record, and one behind base gets base.
func (d *Drain) bucket(idx int) *ivBucket {
	idx = max(idx, d.base)
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

// flushClosed closes the intervals every lane has closed, in order. At
// the end (all) it closes every interval some lane closed, and gives the
// last one's operations to Config.Last.
func (d *Drain) flushClosed(all bool) {
	ih := d.c.IntervalHist
	for ih != nil && len(d.open) > 0 {
		b := d.open[0]
		if len(d.open) == 1 && all {
			d.c.Last(b.ops)
			b.ops = 0
			return
		}
		if !all && !d.closedByAll(d.base, b) {
			return
		}
		// one no lane closed (at the end), or one that would end where the
		// last one did (a lane that returned past two boundaries at once
		// closed both, another lane's operations are in the second): it
		// joins the next
		if b.end != 0 && b.end > d.lastEnd {
			d.c.Close(b.ops, b.end)
			if b.ops > 0 {
				d.lastEnd = b.end
			}
		} else {
			d.bucket(d.base + 1).ops += b.ops
		}
		d.open = d.open[1:]
		d.base++
		if len(d.open) == 0 {
			d.open = append(d.open, &ivBucket{})
		} else if nb := d.open[0]; nb.h != nil { // now the current interval
			ih.Merge(nb.h)
			nb.h.Reset()
			d.spare, nb.h = nb.h, nil
		}
	}
}

// closedByAll reports whether interval idx is closed: some lane closed it
// (b.end), and every lane did or has no more marks to give (fin).
func (d *Drain) closedByAll(idx int, b *ivBucket) bool {
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
