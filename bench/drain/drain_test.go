package drain

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/hist"
)

// sampleCap is the engines' ring size (bench's sampleCap).
const sampleCap = 1 << 16

// span is one closed interval as ivRec keeps it.
type span struct {
	start, end, ops int64
	p50, p99        int64
}

// ivRec is a test's intervals as bench keeps them: Close adds the
// operations and closes the current interval (none while it has no
// operations: its samples carry over), Last adds the last one's.
type ivRec struct {
	h       *hist.Histogram
	ops, at int64
	list    []span
}

func (r *ivRec) flush(end int64) {
	if r.ops == 0 {
		return
	}
	p50, _ := r.h.Percentile(50)
	p99, _ := r.h.Percentile(99)
	r.list = append(r.list, span{r.at, end, r.ops, p50, p99})
	r.h.Reset()
	r.ops, r.at = 0, end
}

// start starts a drain over rings, with intervals every every (0: none)
// into rec.
func start(rings [][]Ring, lats [][]*hist.Histogram, rec *ivRec, every int64) *Drain {
	c := Config{Rings: rings, Lats: lats, Clock: func() int64 { return 0 }}
	if every > 0 {
		rec.h = hist.New()
		c.IntervalHist, c.Next, c.Every = rec.h, every, time.Duration(every)
		c.Close = func(ops, end int64) { rec.ops += ops; rec.flush(end) }
		c.Last = func(ops int64) { rec.ops += ops }
	}
	return Start(c)
}

// start1 is start with one ring.
func start1(ring Ring, lat *hist.Histogram, rec *ivRec, every int64) *Drain {
	return start([][]Ring{{ring}}, [][]*hist.Histogram{{lat}}, rec, every)
}

// fakeRing is a sampleRing in Go memory that a test's goroutine fills as
// the C loop would: value, then the count with release order.
type fakeRing struct {
	buf        []uint64 // power-of-two length
	w, r, done atomic.Uint64
}

func (f *fakeRing) RingWritten() uint64 { return f.w.Load() }
func (f *fakeRing) RingSamples(from, to uint64) []uint64 {
	c := uint64(len(f.buf))
	i := from & (c - 1)
	return f.buf[i : i+min(to-from, c-i)]
}
func (f *fakeRing) RingRelease(to uint64) { f.r.Store(to) }
func (f *fakeRing) CompletedNow() uint64  { return f.done.Load() }
func (f *fakeRing) Capacity() int         { return len(f.buf) }

// put writes v, waiting while the ring is full, and reports whether it
// had to wait (a posting stall in the real loop).
func (f *fakeRing) put(v uint64) (waited bool) {
	w := f.w.Load()
	for w-f.r.Load() >= uint64(len(f.buf)) {
		waited = true
		time.Sleep(10 * time.Microsecond)
	}
	f.buf[w&uint64(len(f.buf)-1)] = v
	f.w.Store(w + 1)
	return waited
}

// TestSampleDrain: the drainer records every sample exactly once while the
// producer writes, many times round a small ring, and attributes each
// sample to the interval its mark closes.
func TestSampleDrain(t *testing.T) {
	ring := &fakeRing{buf: make([]uint64, 1024)}
	lat := hist.New()
	iv := &ivRec{}
	d := start1(ring, lat, iv, 1000)
	const n, per = 50000, 10000 // 5 intervals of 10000 samples; interval k's samples are k+1
	for i := range n {
		ring.put(uint64(i/per + 1))
		ring.done.Store(uint64(i + 1))
		if (i+1)%per == 0 {
			// the interval ends at engine time 1000*(k+1) and holds ops per
			d.Lane(0).Mark(int64(i+1), int64(1000*((i+1)/per)), i+1 == n)
		}
	}
	d.Finish()
	iv.flush(int64(1000 * (n / per)))
	if lat.Count() != n || lat.Min() != 1 || lat.Max() != n/per {
		t.Fatalf("recorded %d samples, min %d, max %d; want %d, 1, %d", lat.Count(), lat.Min(), lat.Max(), n, n/per)
	}
	if ring.r.Load() != n {
		t.Errorf("released %d, want %d", ring.r.Load(), n)
	}
	if len(iv.list) != n/per {
		t.Fatalf("%d intervals, want %d: %+v", len(iv.list), n/per, iv.list)
	}
	for k, it := range iv.list {
		if it.ops != per || it.p50 != int64(k+1) || it.p99 != int64(k+1) {
			t.Errorf("interval %d: %d ops, p50 %v, p99 %v; want %d ops of value %d", k, it.ops, it.p50, it.p99, per, k+1)
		}
	}
}

// BenchmarkSampleDrain: the drainer's cost per sample (the hot path of
// recording a bandwidth test's completions, off the engine's thread) and
// how often a producer writing as fast as it can finds a 64 Ki ring full.
func BenchmarkSampleDrain(b *testing.B) {
	ring := &fakeRing{buf: make([]uint64, sampleCap)}
	lat := hist.New()
	d := start1(ring, lat, &ivRec{}, 0)
	stalls := 0
	b.ResetTimer()
	for i := range b.N {
		if ring.put(uint64(1000 + i%5000)) {
			stalls++
		}
	}
	d.Lane(0).Mark(int64(b.N), 0, true)
	d.Finish()
	b.StopTimer()
	if lat.Count() != int64(b.N) {
		b.Fatalf("recorded %d of %d", lat.Count(), b.N)
	}
	b.ReportMetric(float64(stalls), "stalls")
}

// passRing counts the drainer's passes (one RingWritten each, and one per
// mark).
type passRing struct {
	fakeRing
	passes atomic.Int64
}

func (p *passRing) RingWritten() uint64 { p.passes.Add(1); return p.fakeRing.RingWritten() }

// TestSampleDrainWakeups: on a slow link (a few hundred completions a
// second, as across the two guests' wire) the drainer wakes about once a
// second, not every 50 ms: each wake-up costs the sender's CPU thread
// wake-ups and preempts its busy-polling engine thread. A mark and finish
// still get their pass at once.
func TestSampleDrainWakeups(t *testing.T) {
	ring := &passRing{fakeRing: fakeRing{buf: make([]uint64, sampleCap)}}
	lat := hist.New()
	d := start1(ring, lat, &ivRec{}, 1000)
	begin := time.Now()
	n := 0
	for time.Since(begin) < 600*time.Millisecond { // 300 completions a second
		ring.put(100)
		n++
		ring.done.Store(uint64(n))
		time.Sleep(3 * time.Millisecond)
	}
	// passes at about 1, 5, 21, 85 and 341 ms (the sleep grows fourfold
	// to the second a quarter ring takes at this rate); every 50 ms before
	if p := ring.passes.Load(); p > 7 {
		t.Errorf("%d drainer passes in 600 ms of 300 samples a second; want at most 7", p)
	}
	// an interval's mark is applied at once, not after the sleep
	d.Lane(0).Mark(int64(n), 1000, false)
	for deadline := time.Now().Add(300 * time.Millisecond); ; time.Sleep(time.Millisecond) {
		d.mu.Lock()
		pending := len(d.lanes[0].marks)
		d.mu.Unlock()
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mark still pending after 300 ms: the drainer did not wake for it")
		}
	}
	time.Sleep(20 * time.Millisecond) // the drainer back in its long sleep
	t0 := time.Now()
	d.Finish()
	if el := time.Since(t0); el > 300*time.Millisecond {
		t.Errorf("finish took %v: the drainer slept through it", el)
	}
	if lat.Count() != int64(n) {
		t.Errorf("recorded %d of %d samples", lat.Count(), n)
	}
}

// TestDrainSleep: the drainer wakes as often as a quarter of the ring takes
// to fill at the rate it saw, within [drainPoll, drainPollMax], the sleep
// growing at most fourfold a pass, and doubling after a pass that found
// nothing only up to drainIdleMax.
func TestDrainSleep(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name     string
		n        uint64
		dt, prev time.Duration
		want     time.Duration
	}{
		{"400 Gb/s of 16 KiB: 3 M/s, a quarter of 64 Ki in 5.46 ms", 3000, ms, 2 * ms, 5461333 * time.Nanosecond},
		{"faster than a quarter ring per ms: the floor", 100000, ms, ms, drainPoll},
		{"a slow wire: 300/s, at most fourfold the last sleep", 3, 10 * ms, ms, 4 * ms},
		{"a slow wire: 300/s, the ceiling", 3, 10 * ms, 400 * ms, drainPollMax},
		{"a slow wire at 300/s takes 55 s to fill a quarter ring", 300, time.Second, time.Second, drainPollMax},
		{"nothing found: the sleep doubles", 0, 4 * ms, 4 * ms, 8 * ms},
		{"nothing found again: up to drainIdleMax", 0, 40 * ms, 40 * ms, drainIdleMax},
		{"nothing found after a long sleep: drainIdleMax", 0, time.Second, time.Second, drainIdleMax},
	} {
		if got := drainSleep(c.n, c.dt, c.prev, 65536, drainPollMax); got != c.want {
			t.Errorf("%s: drainSleep(%d, %v, %v) = %v, want %v", c.name, c.n, c.dt, c.prev, got, c.want)
		}
	}
}

// TestSampleDrainLanes: a multi-QP test's threads (lanes, one with two
// rings) count the test's intervals once: each interval holds every
// lane's operations and samples up to its own mark at that boundary, ends
// when the last lane closed it, and is flushed only then, even when one
// lane has marked every boundary before the other marked any. Each ring's
// samples also go to its own histogram.
func TestSampleDrainLanes(t *testing.T) {
	a := &fakeRing{buf: make([]uint64, 1024)}
	b1, b2 := &fakeRing{buf: make([]uint64, 1024)}, &fakeRing{buf: make([]uint64, 1024)}
	la, lb1, lb2 := hist.New(), hist.New(), hist.New()
	iv := &ivRec{}
	d := start([][]Ring{{a}, {b1, b2}}, [][]*hist.Histogram{{la}, {lb1, lb2}}, iv, 1000)
	// lane 0: 300 samples of value k+1 in interval k, closing at 1001,
	// 2001, then past the deadline (last) at 3005
	for k := range 3 {
		for range 300 {
			a.put(uint64(k + 1))
		}
		d.Lane(0).Mark(int64(300*(k+1)), int64(1000*(k+1)+[]int{1, 1, 5}[k]), k == 2)
	}
	d.Lane(0).SenderDone()
	time.Sleep(20 * time.Millisecond) // the drainer has seen lane 0: nothing may be flushed yet
	early := len(iv.list)             // written by the drainer only when it flushes, which it must not do yet
	// lane 1: 50 samples of value 100+k on each ring, closing at 1007, 2003
	for k := range 3 {
		for range 50 {
			b1.put(uint64(100 + k))
			b2.put(uint64(100 + k))
		}
		d.Lane(1).Mark(int64(100*(k+1)), int64(1000*(k+1)+[]int{7, 3, 9}[k]), k == 2)
	}
	d.Lane(1).SenderDone()
	d.Finish()
	iv.flush(3010)
	if early != 0 {
		t.Errorf("%d intervals flushed before the second lane closed any", early)
	}
	if la.Count() != 900 || lb1.Count() != 150 || lb2.Count() != 150 || la.Max() != 3 || lb1.Min() != 100 {
		t.Errorf("per-ring histograms: %d (max %d), %d (min %d), %d; want 900 (3), 150 (100), 150", la.Count(), la.Max(), lb1.Count(), lb1.Min(), lb2.Count())
	}
	want := []span{{start: 0, end: 1007}, {start: 1007, end: 2003}, {start: 2003, end: 3010}}
	if len(iv.list) != len(want) {
		t.Fatalf("%d intervals, want %d: %+v", len(iv.list), len(want), iv.list)
	}
	for k, it := range iv.list {
		// 300 samples of lane 0 and 100 of lane 1: p50 lane 0's, p99 lane 1's
		if it.start != want[k].start || it.end != want[k].end || it.ops != 400 || it.p50 != int64(k+1) || it.p99 != int64(100+k) {
			t.Errorf("interval %d: %v..%v, %d ops, p50 %v, p99 %v; want %v..%v, 400 ops, p50 %d, p99 %d",
				k, it.start, it.end, it.ops, it.p50, it.p99, want[k].start, want[k].end, k+1, 100+k)
		}
	}
}

// BenchmarkSampleDrainLanes: the drainer's cost per sample for a multi-QP
// test (two threads of two QPs each, every ring written by its own
// producer as fast as it can), with intervals on: each sample goes to its
// QP's histogram and the interval's.
func BenchmarkSampleDrainLanes(b *testing.B) {
	rings := [][]Ring{make([]Ring, 2), make([]Ring, 2)}
	lats := [][]*hist.Histogram{make([]*hist.Histogram, 2), make([]*hist.Histogram, 2)}
	var all []*fakeRing
	for t := range rings {
		for k := range rings[t] {
			f := &fakeRing{buf: make([]uint64, sampleCap)}
			rings[t][k], lats[t][k] = f, hist.New()
			all = append(all, f)
		}
	}
	iv := &ivRec{}
	d := start(rings, lats, iv, 1<<40)
	var stalls atomic.Int64
	b.ResetTimer()
	done := make(chan struct{})
	for _, f := range all {
		go func() {
			for i := range b.N {
				if f.put(uint64(1000 + i%5000)) {
					stalls.Add(1)
				}
			}
			done <- struct{}{}
		}()
	}
	for range all {
		<-done
	}
	for t := range rings {
		d.Lane(t).Mark(int64(2*b.N), 0, true)
		d.Lane(t).SenderDone()
	}
	d.Finish()
	b.StopTimer()
	if iv.ops != int64(4*b.N) || lats[1][1].Count() != int64(b.N) {
		b.Fatalf("ops %d, last ring recorded %d; want %d, %d", iv.ops, lats[1][1].Count(), 4*b.N, b.N)
	}
	b.ReportMetric(float64(stalls.Load()), "stalls")
}

// TestSampleDrainLanesSkip: a lane whose C loop returned past two
// boundaries at once closes both intervals at that time; the second, which
// holds another lane's operations, would end where the first did: it joins
// the next, and no interval has zero length. A lane whose sender is done
// and has fallen behind the closed intervals records nothing more (its
// passes must not look up an interval already closed).
func TestSampleDrainLanesSkip(t *testing.T) {
	a, b := &fakeRing{buf: make([]uint64, 1024)}, &fakeRing{buf: make([]uint64, 1024)}
	iv := &ivRec{}
	d := start([][]Ring{{a}, {b}}, [][]*hist.Histogram{{hist.New()}, {hist.New()}}, iv, 1000)
	put := func(f *fakeRing, n int) {
		for range n {
			f.put(5)
		}
	}
	// lane 0 returns only at 2500 (past 1000 and 2000), then past the
	// deadline at 3600, and is done
	put(a, 100)
	d.Lane(0).Mark(100, 2500, false)
	put(a, 100)
	d.Lane(0).Mark(200, 3600, true)
	d.Lane(0).SenderDone()
	time.Sleep(20 * time.Millisecond)
	// lane 1 returns at each boundary
	for k := range 3 {
		put(b, 100)
		d.Lane(1).Mark(int64(100*(k+1)), int64(1000*(k+1)+1), false)
	}
	time.Sleep(20 * time.Millisecond) // a pass with lane 0 behind the closed intervals
	put(b, 100)
	d.Lane(1).Mark(400, 3500, true)
	d.Lane(1).SenderDone()
	d.Finish()
	iv.flush(3600)
	want := []span{{start: 0, end: 2500, ops: 200}, {start: 2500, end: 3001, ops: 300}, {start: 3001, end: 3600, ops: 100}}
	if len(iv.list) != len(want) {
		t.Fatalf("intervals %+v, want %+v", iv.list, want)
	}
	for k, it := range iv.list {
		if it.start != want[k].start || it.end != want[k].end || it.ops != want[k].ops {
			t.Errorf("interval %d: %d..%d, %d ops; want %d..%d, %d ops", k, it.start, it.end, it.ops, want[k].start, want[k].end, want[k].ops)
		}
	}
}
