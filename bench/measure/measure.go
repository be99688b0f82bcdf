package measure

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/drain"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/statusline"
	"github.com/rdmabench/rdmabench/bench/timeline"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// Options control how the client side measures and reports.
type Options struct {
	CPU int // pin the engine thread to this CPU; -1: no pinning
	// NodeCPUs are the CPUs of the device's NUMA node (Device.Place):
	// threads that CPU and LoadCPUs leave unpinned are pinned to them.
	// Client.Run sets it.
	NodeCPUs []int
	// LoadCPUs pins the load QPs' threads, round robin (nil: not pinned).
	LoadCPUs []int
	Interval time.Duration // interval lines; 0: 1 s in duration mode, none otherwise
	Out      io.Writer     // interval lines go here (nil: nowhere)
	Unit     string        // bandwidth unit of interval lines: MiB, MB or Gb
	// Progress, when set (a terminal), gets a live line: elapsed and remaining
	// time, p50 and p99 so far, rewritten in place about 4 times a second.
	Progress io.Writer
	// HLog, when set, gets one interval histogram per second (or --interval)
	// of every test, tagged with the test's name (HdrHistogram .hlog).
	HLog *hist.LogWriter

	// Timeline, set by Client.Run for tests with intervals, takes the
	// port counters at each interval boundary (bench/timeline).
	Timeline *timeline.Client
}

// LockThread locks the goroutine to its OS thread and pins it: to cpu when
// cpu >= 0, else to the NUMA node's CPUs node (nil: not pinned). The caller
// must call UnlockThread.
func LockThread(cpu int, node []int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	switch {
	case cpu >= 0:
		set.Set(cpu)
	case len(node) > 0:
		for _, c := range node {
			set.Set(c)
		}
	default:
		return nil
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		if cpu >= 0 {
			return fmt.Errorf("pin the engine thread to CPU %d: %w", cpu, err)
		}
		return fmt.Errorf("pin the engine thread to the NUMA node's CPUs %v: %w", node, err)
	}
	return nil
}

// processCPUs is the CPU affinity the process started with (nil: unknown).
var processCPUs = func() *unix.CPUSet {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	return &set
}()

// RestoreAffinity gives the calling thread the process's CPU affinity back.
func RestoreAffinity() error {
	if processCPUs == nil {
		return nil
	}
	return unix.SchedSetaffinity(0, processCPUs)
}

// UnlockThread undoes LockThread: the thread gets the process's CPU
// affinity back before the runtime may run other goroutines on it, so
// that one test's pinning (--cpu, the NUMA node) does not follow the
// thread into the next test or into the server's next session. A thread
// whose affinity cannot be restored stays locked and ends with its
// goroutine.
func UnlockThread() {
	if RestoreAffinity() == nil {
		runtime.UnlockOSThread()
	}
}

// threadCPU returns the calling thread's user and system CPU time, ns.
func threadCPU() (user, sys int64) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0, 0
	}
	return ru.Utime.Nano(), ru.Stime.Nano()
}

// CPUSpan measures one thread's CPU time between start and stop.
type CPUSpan struct{ user, sys int64 }

func StartCPU() CPUSpan { u, s := threadCPU(); return CPUSpan{u, s} }

func (c CPUSpan) Stop() (user, sys int64) {
	u, s := threadCPU()
	return u - c.user, s - c.sys
}

// Intervals accumulates interval statistics during a measurement: lines
// printed, Result.Intervals, and .hlog entries.
type Intervals struct {
	Every     time.Duration
	start     int64 // engine clock, ns
	wallStart time.Time
	Next      int64
	ops       int64
	h         *hist.Histogram // values as reported (halved for RTT/2)
	shift     uint            // 1 when latency is half the round trip
	size      int
	out       io.Writer
	hlog      *hist.LogWriter
	tag       string
	unit      string
	List      []result.Interval
	lastAt    int64
	Err       error // first .hlog write error
	timeline  *timeline.Client
}

func NewIntervals(s spec.Spec, o Options, start int64) *Intervals {
	if o.Unit == "" {
		o.Unit = result.UnitMiB
	}
	every := o.Interval
	if every == 0 && (s.Duration > 0 || o.HLog != nil) {
		every = time.Second
	}
	iv := &Intervals{Every: every, start: start, wallStart: time.Now(), size: s.Size, lastAt: start, unit: o.Unit,
		hlog: o.HLog, tag: strings.ReplaceAll(s.Name(), " ", "-")}
	if o.Interval > 0 || s.Duration > 0 {
		iv.out = o.Out
	}
	if DivisorOf(s) == 2 {
		iv.shift = 1
	}
	if every > 0 {
		iv.Next = start + int64(every)
		iv.h = hist.New()
		iv.timeline = o.Timeline
		iv.timeline.Begin(iv.wallStart, iv.tag) // mark 0: the port counters at the start
	} else {
		iv.Next = math.MaxInt64
	}
	return iv
}

// Add accounts samples and ops; at or past the boundary it closes an interval.
func (iv *Intervals) Add(samples []uint64, ops int64, now int64) {
	if iv.h == nil {
		return
	}
	iv.h.RecordSlice(samples, iv.shift)
	iv.ops += ops
	if now >= iv.Next {
		iv.Flush(now)
		for iv.Next <= now {
			iv.Next += int64(iv.Every)
		}
	}
}

func (iv *Intervals) Flush(now int64) {
	if iv.h == nil || iv.ops == 0 {
		return
	}
	p50, ok50 := iv.h.Percentile(50)
	p99, ok99 := iv.h.Percentile(99)
	it := result.Interval{StartNS: iv.lastAt - iv.start, EndNS: now - iv.start, Ops: iv.ops,
		Bandwidth: result.NewBandwidth(iv.size, iv.ops, now-iv.lastAt),
		P50:       result.NanosOf(hist.Value{NS: p50, OK: ok50}, 1), P99: result.NanosOf(hist.Value{NS: p99, OK: ok99}, 1)}
	iv.List = append(iv.List, it)
	iv.timeline.Mark() // read in the timeline's goroutine, not here
	if iv.out != nil {
		report.WriteIntervalLine(iv.out, it, iv.unit)
	}
	if iv.hlog != nil && iv.Err == nil {
		iv.h.SetTag(iv.tag)
		iv.Err = iv.hlog.WriteInterval(iv.h, iv.wall(iv.lastAt), iv.wall(now))
	}
	iv.h.Reset()
	iv.ops = 0
	iv.lastAt = now
}

// wall converts an engine clock reading to wall-clock time.
func (iv *Intervals) wall(t int64) time.Time { return iv.wallStart.Add(time.Duration(t - iv.start)) }

// Progress is a test's status line.
type Progress = statusline.Line

func NewProgress(s spec.Spec, o Options, start int64) *Progress {
	return &Progress{W: o.Progress, Name: s.Name(), Start: start, Total: s.Iters, Dur: s.Duration, Div: DivisorOf(s)}
}

// LatEngine is a ping-pong engine whose loop runs in C: the RDMA engine or
// the TCP socket engine.
type LatEngine interface {
	Capacity() int
	ResetSamples()
	LatClient(n int) error
	Samples() []uint64
}

// Scheduler is a LatEngine that can run open loop (--rate).
type Scheduler interface {
	SetSchedule(rate float64, poisson bool, seed uint64)
	FirstIntended() int64
}

// Lat runs the client side of a latency test on a connected engine.
// base carries the result fields the transport knows (queue sizes, ...). It
// returns the result and the total iterations including warm-up.
func Lat(eng LatEngine, base result.Result, s spec.Spec, o Options) (result.Result, int64, error) {
	if err := LockThread(o.CPU, o.NodeCPUs); err != nil {
		return result.Result{}, 0, err
	}
	defer UnlockThread()
	warm, err := latWarmup(eng, s)
	if err != nil {
		return result.Result{}, warm, err
	}
	cpu := StartCPU()
	r := &latRun{eng: eng, s: s, lat: hist.New(), capN: int64(eng.Capacity())} // lat: full round trips; reported halved for SEND/WRITE
	sched, _ := eng.(Scheduler)
	if s.Rate > 0 {
		if sched == nil {
			return result.Result{}, warm, fmt.Errorf("this transport cannot run open loop (--rate)")
		}
		sched.SetSchedule(s.Rate, s.Schedule == result.SchedulePoisson, uint64(verbs.Now()))
	}
	start := verbs.Now()
	iv := NewIntervals(s, o, start)
	prog := NewProgress(s, o, start)
	defer prog.Clear()
	if ringOff := r.openLoopRing(iv, prog); ringOff != nil {
		defer ringOff()
	}
	defer r.finish()
	measured, err := r.loop(start, iv, prog)
	if err != nil {
		return result.Result{}, warm + measured, err
	}
	end := verbs.Now()
	r.finish()
	iv.Flush(end)
	if iv.Err != nil {
		return result.Result{}, warm + measured, fmt.Errorf("write .hlog: %w", iv.Err)
	}
	res := base
	if s.Rate > 0 {
		if fi := sched.FirstIntended(); fi > 0 {
			start = fi
		}
		res.OpenLoop = &result.OpenLoop{Schedule: s.ScheduleOrDefault(), RateTarget: s.Rate,
			RateAchieved: float64(measured) / (float64(end-start) / 1e9)}
	}
	res.Warmup = warm
	res.Iterations = measured
	res.DurationNS = end - start
	res.CPU = ClientCPU(cpu, measured)
	res.Bandwidth = result.NewBandwidth(s.Size, measured, end-start)
	res.Intervals = iv.List
	if err := res.SetLatency(r.lat, DivisorOf(s)); err != nil {
		return result.Result{}, warm + measured, fmt.Errorf("encode histogram: %w", err)
	}
	return res, warm + measured, nil
}

// latWarmup runs a latency test's warm-up on eng, its samples dropped:
// s.Warmup operations, or batches of 64 for s.WarmupTime. It returns the
// operations it ran.
func latWarmup(eng LatEngine, s spec.Spec) (int64, error) {
	capN := int64(eng.Capacity())
	total := int64(0)
	warmEnd := verbs.Now() + int64(s.WarmupTime)
	for total < s.Warmup || (s.WarmupTime > 0 && verbs.Now() < warmEnd) {
		n := min(capN, 64)
		if s.WarmupTime == 0 {
			n = min(capN, s.Warmup-total)
		}
		eng.ResetSamples()
		if err := eng.LatClient(int(n)); err != nil {
			return total, fmt.Errorf("warm-up: %w", err)
		}
		total += n
	}
	return total, nil
}

// latRing is a latency engine whose samples can go to a ring (open loop).
type latRing interface {
	drain.RoomRing
	SetRing(on bool) error
	ResetCounters()
}

// latRun is the measured phase of one Lat.
type latRun struct {
	eng  LatEngine
	s    spec.Spec
	lat  *hist.Histogram
	capN int64 // the most operations in one batch
	// open loop: the drainer records from the engine's ring while the C
	// loop keeps its schedule (nil: Go records each batch)
	dr *drain.Drain
	rl latRing
}

// openLoopRing starts the drainer of an open-loop test (--rate) on the
// engine's ring, so that no recording delays an intended send; it returns
// what turns the ring off (nil: no ring).
func (r *latRun) openLoopRing(iv *Intervals, prog *Progress) func() {
	rl, _ := r.eng.(latRing)
	if r.s.Rate <= 0 || rl == nil || rl.SetRing(true) != nil {
		return nil
	}
	rl.ResetCounters()
	r.rl, r.dr = rl, StartDrain(rl, r.lat, iv, prog)
	r.capN = max(r.capN/2, 1)           // a batch waits for room for half the ring, not all of it
	return func() { rl.SetRing(false) } //nolint:errcheck // off never fails
}

// finish stops the drainer once its sender is done (no drainer: nothing).
func (r *latRun) finish() {
	if r.dr != nil {
		r.dr.Lane(0).SenderDone()
		r.dr.Finish()
		r.dr = nil
	}
}

// loop runs the measured batches from start: s.Iters operations, or
// batches of about 20 ms until s.Duration ends. It returns the operations
// measured, also with an error.
func (r *latRun) loop(start int64, iv *Intervals, prog *Progress) (int64, error) {
	s, eng := r.s, r.eng
	deadline := start + int64(s.Duration)
	batch, measured := int64(64), int64(0)
	for {
		now := verbs.Now()
		var n int64
		if s.Iters > 0 {
			n = min(r.capN, maxBatch, s.Iters-measured)
		} else {
			if now >= deadline {
				break
			}
			// size batches to about 20 ms so the run ends close to its duration
			if measured > 0 {
				per := max((now-start)/measured, 1)
				batch = Clamp(min(int64(20*time.Millisecond), deadline-now)/per+1, 1, r.capN)
			}
			n = batch
		}
		if n <= 0 {
			break
		}
		if r.dr != nil {
			if err := r.dr.Lane(0).LatBatch(r.rl, int(n), measured, eng.LatClient, verbs.Now, endpoint.EngineTimeout); err != nil {
				return measured, err
			}
			measured += n
			continue
		}
		eng.ResetSamples()
		if err := eng.LatClient(int(n)); err != nil {
			return measured, err
		}
		samples := eng.Samples()
		r.lat.RecordSlice(samples, 0)
		measured += n
		now = verbs.Now()
		iv.Add(samples, n, now)
		prog.Update(now, measured, r.lat)
	}
	return measured, nil
}

// ClientCPU fills the client's half of CPUUsage for msgs messages.
func ClientCPU(c CPUSpan, msgs int64) *result.CPUUsage {
	u, s := c.Stop()
	return &result.CPUUsage{ClientUserNS: u, ClientSysNS: s, ClientUSPerMsg: PerMsgUS(u+s, msgs)}
}

func PerMsgUS(ns, msgs int64) float64 {
	if msgs <= 0 {
		return 0
	}
	return float64(ns) / 1e3 / float64(msgs)
}

// DivisorOf is 2 when the spec reports half the measured round trip.
func DivisorOf(s spec.Spec) float64 {
	if s.HalfRTT() {
		return 2
	}
	return 1
}

// maxBatch bounds a latency batch, so interval and progress lines stay live
// (the pause between batches is outside every sample).
const maxBatch = 8192

func Clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// BW runs the client side of a bandwidth test.
func BW(e *endpoint.Endpoint, s spec.Spec, o Options) (result.Result, int64, error) {
	if err := LockThread(o.CPU, o.NodeCPUs); err != nil {
		return result.Result{}, 0, err
	}
	defer UnlockThread()
	eng := e.Eng
	far := int64(math.MaxInt64)
	warmed := int64(0)
	if s.Warmup > 0 || s.WarmupTime > 0 {
		if err := BWWarmup(NewEngSender(eng, WarmTarget(s), func(until int64) (bool, error) {
			eng.ResetSamples()
			return eng.BWClient(until)
		}), s); err != nil {
			return result.Result{}, int64(eng.Completed()), err
		}
		warmed = int64(eng.Completed())
		eng.ResetCounters()
	}
	cpu := StartCPU()
	lat := hist.New()
	target := uint64(math.MaxUint64)
	if s.Iters > 0 {
		target = uint64(s.Iters)
	}
	snd := NewEngSender(eng, target, nil)
	start := verbs.Now()
	iv := NewIntervals(s, o, start)
	prog := NewProgress(s, o, start)
	defer prog.Clear()
	deadline := far
	if s.Duration > 0 {
		deadline = start + int64(s.Duration)
	}
	// The samples go to a ring that the drainer records from its own
	// goroutine while this thread stays in the C loop: recording a full
	// buffer here would stop posting long enough to empty the send queue
	// of a fast NIC (bwdrain.go).
	if err := eng.SetRing(true); err != nil {
		return result.Result{}, warmed, err
	}
	defer eng.SetRing(false) //nolint:errcheck // off never fails
	drain := StartDrain(eng, lat, iv, prog)
	drained := false
	defer func() {
		if !drained {
			drain.Finish()
		}
	}()
	// the drainer owns iv: the loop keeps its own boundary
	if err := BWPhase(snd, drain.Lane(0), iv.Next, deadline, iv.Every); err != nil {
		return result.Result{}, warmed + int64(eng.Completed()), err
	}
	drain.Finish()
	drained = true
	first, last := eng.Span()
	iv.Flush(last)
	if iv.Err != nil {
		return result.Result{}, warmed + int64(eng.Completed()), fmt.Errorf("write .hlog: %w", iv.Err)
	}
	ops := int64(eng.Completed())
	r := BaseResult(s, e)
	r.Iterations = ops
	r.DurationNS = last - first
	r.CPU = ClientCPU(cpu, ops)
	r.Bandwidth = result.NewBandwidth(s.Size, ops, last-first)
	r.Intervals = iv.List
	if err := r.SetLatency(lat, 1); err != nil {
		return result.Result{}, warmed + ops, fmt.Errorf("encode histogram: %w", err)
	}
	r.Warmup = warmed
	full, longest := eng.Pauses()
	r.PostingPauses = &result.PostingPauses{SampleBufferFull: int64(full), MaxNS: longest.Nanoseconds()}
	return r, warmed + ops, nil
}

func BaseResult(s spec.Spec, e *endpoint.Endpoint) result.Result {
	r := result.Result{Op: s.Op, Mode: s.Mode, SizeBytes: s.Size, Warmup: s.Warmup, TimedInterval: s.TimedInterval(),
		TxDepth: s.TxDepth, CQMod: s.CQMod, RxDepth: s.RxDepth, PostList: s.PostList, Event: s.Event,
		QPType: s.QPTypeLabel(), MRMode: s.MRModeLabel(), HugePages: s.HugePages, SRQ: s.SRQ}
	r.UseStats(s.Stats())
	r.RateLimit = s.ShapeResult()
	if e != nil {
		r.Inline, r.InlineReason = e.Inline, e.InlineWhy
		r.QPTimeout, r.RetryCount, r.RNRRetry, r.OutstandingReads = s.QPTimeout, s.RetryCount, s.RNRRetry, e.RdDepth
		r.Choices = endpoint.ChoicesResult(s, e)
	}
	r.Workload = s.WorkloadResult()
	return r
}

// TimelineWanted reports whether a test of s run with o has reporting
// intervals, and so a counter timeline (NewIntervals' rule).
func TimelineWanted(s spec.Spec, o Options) bool {
	return o.Interval > 0 || s.Duration > 0 || o.HLog != nil
}
