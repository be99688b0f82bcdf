package kinds

// Bidirectional bandwidth tests (-b, as perftest's -b): both sides post the
// test's operation towards each other at once, on the one measured QP.
//
// The server learns it from Spec.Bidirectional. For WRITE, READ and atomics
// it runs the same sender loop as the client (rb_bw_client) towards the
// client's target area, which then grants the server's operation (see
// endpoint.RemoteAccess); for SEND each side runs rb_bidir_send, one loop that posts
// its SENDs and keeps re-posting the receives of the peer's.
//
// Both sides measure over the same interval: on the control connection,
// after the server's start, the client says warmup and both warm up; the
// server says warm when it is done; once the client is done too it says
// measure and takes its start time, the server takes its own on receipt
// (one control message later). Each side then measures for the duration,
// or for the iterations, from its own start, and reports its own span
// (first post to last completion). The client's end carries its total, the
// server's result its own figures (proto.ServerResult.Bidir); a SEND side
// keeps receiving until the peer's total arrived. The result's figures are
// the sums over both sides, as perftest -b prints them, and Sides has each.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/timeline"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// bidirSlice is how long one C call of a SEND side runs while it waits at
// the barrier, receiving: Go checks the barrier between calls.
const bidirSlice = time.Millisecond

// bidirBarrierLimit is how long a side waits at the barrier for the other
// side's warm-up, after its own took warm: as long again, at least
// --warmup-time, plus the engine and control timeouts.
func bidirBarrierLimit(s spec.Spec, warm time.Duration) time.Duration {
	return endpoint.EngineTimeout + ctrl.MsgTimeout + max(s.WarmupTime, warm)
}

// BidirAlone runs one side of a bidirectional test on ep with no
// barriers of rdmabench's protocol (the drop-in facing perftest, whose
// record swap is the barrier): its warm-up, then its measured operations.
func BidirAlone(ctx context.Context, ep *endpoint.Endpoint, s spec.Spec, o measure.Options) (BidirRun, error) {
	side := &bidirSide{ep: ep, s: s, o: o, ctx: ctx}
	return side.run()
}

// bidirSide is one side of a bidirectional test: its endpoint and the
// hooks through which it meets the other side at the barrier.
type bidirSide struct {
	ep *endpoint.Endpoint
	s  spec.Spec
	o  measure.Options // the client's (interval lines, progress, CPU); the server's CPU
	// ctx ends when the control connection fails (its cause says why) or
	// the run is cancelled; whoever cancels it also aborts the engine.
	ctx context.Context

	startWarmup <-chan struct{}                // closed when this side may warm up (nil: at once)
	warmed      func(took time.Duration) error // called once this side's warm-up is done
	measure     <-chan struct{}                // closed when this side may measure
	begin       func() error                   // called right before this side takes its start time (nil: none)
	measured    func(total int64) error        // called once its measured operations are complete, with its total
}

// BidirRun is what one side's own operations did.
type BidirRun struct {
	Ops         int64 // operations completed while measuring
	First, Last int64 // the measured operations' first post and last completion (engine clock, ns)
	warmed      int64 // operations completed in the warm-up
	lat         *hist.Histogram
	intervals   []result.Interval
	user, sys   int64 // CPU time of the engine thread while measuring, ns
}

// total is every operation the side posted: what the peer receives (SEND).
func (r BidirRun) total() int64 { return r.warmed + r.Ops }

// SetLatency puts r's histogram (an empty one when r has none) and its
// intervals into res.
func (r BidirRun) SetLatency(res *result.Result) error {
	res.Intervals = r.intervals
	lat := r.lat
	if lat == nil {
		lat = hist.New()
	}
	if err := res.SetLatency(lat, 1); err != nil {
		return fmt.Errorf("encode histogram: %w", err)
	}
	return nil
}

// direction is r as the server reports it.
func (r BidirRun) direction() *proto.Direction {
	return &proto.Direction{Ops: r.Ops, Warmup: r.warmed, DurationNS: r.Last - r.First}
}

// step runs the side's C loop until until (engine clock): rb_bidir_send for
// SEND, rb_bw_client for the others.
func (b *bidirSide) step(until int64) error {
	b.ep.Eng.ResetSamples()
	var err error
	if b.s.Traits().ConsumesRecv {
		_, err = b.ep.Eng.BidirSend(until)
	} else {
		_, err = b.ep.Eng.BWClient(until)
	}
	return err
}

// ringStep is step in ring mode (the measured phase): the samples stay in
// the ring for the drainer, and full reports a ring the drainer has not
// caught up with.
func (b *bidirSide) ringStep(until int64) (full bool, err error) {
	if b.s.Traits().ConsumesRecv {
		return b.ep.Eng.BidirSend(until)
	}
	return b.ep.Eng.BWClient(until)
}

// err is the cause of the side's context, or err itself.
func (b *bidirSide) err(err error) error {
	if c := context.Cause(b.ctx); c != nil {
		return c
	}
	return err
}

// await waits until ch is closed, the context ends or limit passes. A SEND
// side keeps receiving meanwhile: the peer may still be sending.
func (b *bidirSide) await(ch <-chan struct{}, limit time.Duration, what string) error {
	if ch == nil {
		return nil
	}
	timeout := fmt.Errorf("bidirectional barrier: no %s within %v", what, limit)
	if !b.s.Traits().ConsumesRecv {
		t := time.NewTimer(limit)
		defer t.Stop()
		select {
		case <-ch:
			return nil
		case <-b.ctx.Done():
			return b.err(b.ctx.Err())
		case <-t.C:
			return timeout
		}
	}
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-ch:
			return nil
		case <-b.ctx.Done():
			return b.err(b.ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			return timeout
		}
		if err := b.step(verbs.Now() + int64(bidirSlice)); err != nil { // no sends pending: receives only
			return b.err(err)
		}
	}
}

// run is the side's engine thread: barrier, warm-up, barrier, the measured
// operations and, for SEND, the rest of the peer's messages.
func (b *bidirSide) run() (BidirRun, error) {
	var out BidirRun
	if err := measure.LockThread(b.o.CPU, b.o.NodeCPUs); err != nil {
		return out, err
	}
	defer measure.UnlockThread()
	eng, s := b.ep.Eng, b.s
	far := int64(math.MaxInt64)
	if err := b.await(b.startWarmup, ctrl.MsgTimeout+endpoint.EngineTimeout, "word from the client to warm up"); err != nil {
		return out, err
	}
	warmStart := time.Now()
	if s.Warmup > 0 || s.WarmupTime > 0 {
		if err := measure.BWWarmup(measure.NewEngSender(eng, measure.WarmTarget(s), func(until int64) (bool, error) {
			if err := b.step(until); err != nil {
				return false, b.err(err)
			}
			return false, nil
		}), s); err != nil {
			return out, err
		}
		out.warmed = int64(eng.Completed())
		eng.ResetCounters()
	}
	took := time.Since(warmStart)
	if b.warmed != nil {
		if err := b.warmed(took); err != nil {
			return out, err
		}
	}
	if err := b.await(b.measure, bidirBarrierLimit(s, took), "word that the other side is warm"); err != nil {
		return out, err
	}
	if b.begin != nil {
		if err := b.begin(); err != nil {
			return out, err
		}
	}
	cpu := measure.StartCPU()
	out.lat = hist.New()
	target := uint64(math.MaxUint64)
	if s.Iters > 0 {
		target = uint64(s.Iters)
	}
	snd := measure.NewEngSender(eng, target, b.ringStep)
	start := verbs.Now()
	iv := measure.NewIntervals(s, b.o, start)
	prog := measure.NewProgress(s, b.o, start)
	defer prog.Clear()
	deadline := far
	if s.Duration > 0 {
		deadline = start + int64(s.Duration)
	}
	// as measure.BW: the samples go to the ring, which the drainer records
	// while this thread stays in the C loop (sending and receiving)
	if err := eng.SetRing(true); err != nil {
		return out, err
	}
	drain := measure.StartDrain(eng, out.lat, iv, prog)
	stopRing := sync.OnceFunc(func() {
		drain.Finish()
		eng.SetRing(false) //nolint:errcheck // off never fails
	})
	defer stopRing()
	if err := measure.BWPhase(snd, drain.Lane(0), iv.Next, deadline, iv.Every); err != nil {
		return out, b.err(err)
	}
	stopRing()
	out.user, out.sys = cpu.Stop()
	out.Ops = int64(eng.Completed())
	out.First, out.Last = eng.Span()
	iv.Flush(out.Last)
	if iv.Err != nil {
		return out, fmt.Errorf("write .hlog: %w", iv.Err)
	}
	out.intervals = iv.List
	if b.measured != nil {
		if err := b.measured(out.total()); err != nil {
			return out, err
		}
	}
	if s.Traits().ConsumesRecv { // receive until the stop count: the peer's total
		eng.ResetSamples()
		if _, err := eng.BidirSend(far); err != nil {
			return out, fmt.Errorf("receiving the rest of the peer's messages: %w", b.err(err))
		}
	}
	return out, nil
}

// bidirKind is a bidirectional bandwidth test: both halves run a
// bidirSide, barrier on the control channel, and each reports its own
// direction.
type bidirKind struct{}

// measure is the client side of a bidirectional test, from the server's
// start to its result (it ends the test itself: Measured.Served is
// always set): the server's messages come through the watch t.Watch, and
// whatever aborts the test goes through t.Abort.
func (bidirKind) Measure(t *ClientTest) (Measured, error) {
	r, sr, err := runBidir(t)
	return Measured{Res: r, Served: &sr}, err
}

// runBidir is bidirKind's client half: the result and the server's.
func runBidir(t *ClientTest) (result.Result, proto.ServerResult, error) {
	ctx, w, ab, ep, s, o, stopHeartbeat := t.Ctx, t.Watch, t.Abort, t.EPs.Probe, t.Spec, t.Opts, t.StopHeartbeat
	eng := ep.Eng
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) {
		cancel(err)
		ab.Abort(err)
	}
	measuring := make(chan struct{})
	type served struct {
		sr  proto.ServerResult
		err error
	}
	var results chan served // set once the end is sent
	side := &bidirSide{ep: ep, s: s, o: o, ctx: bctx, measure: measuring,
		warmed: func(took time.Duration) error {
			go func() { // the server's warm: it may have come already
				var r proto.Ready
				err := w.Next(proto.MsgReady, &r, bidirBarrierLimit(s, took))
				if err == nil && r.Phase != proto.PhaseWarm {
					err = fmt.Errorf("server sent %q, expected %q", r.Phase, proto.PhaseWarm)
				}
				if err != nil {
					fail(fmt.Errorf("bidirectional barrier: %w", err))
					return
				}
				close(measuring)
			}()
			return nil
		},
		begin: func() error { return t.C.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseMeasure}) },
		measured: func(total int64) error {
			stopHeartbeat()   // the server reads no message after the end
			o.Timeline.Stop() // nor any mark
			if err := t.C.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: total}); err != nil {
				return err
			}
			results = make(chan served, 1)
			go func() { // a SEND side receives meanwhile, until the server's total
				var sr proto.ServerResult
				err := w.Next(proto.MsgResult, &sr, endpoint.EngineTimeout+15*time.Second)
				switch {
				case err != nil:
				case sr.Error != "":
					err = fmt.Errorf("server: %s", sr.Error)
				case sr.Bidir == nil:
					err = errors.New("the server's result has no figures of its own direction: it did not run bidirectionally")
				}
				if err != nil {
					fail(err)
				} else {
					eng.SetStop(sr.Bidir.Warmup + sr.Bidir.Ops)
				}
				results <- served{sr, err}
			}()
			return nil
		},
	}
	run, err := func() (BidirRun, error) {
		if err := t.C.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseWarmup}); err != nil {
			return BidirRun{}, err
		}
		return side.run()
	}()
	var sr proto.ServerResult
	if results != nil {
		got := <-results
		sr = got.sr
		if got.err != nil { // the server's word: it also ended our side's receiving
			err = got.err
		}
	}
	if err != nil {
		if cause := ab.Err(nil); cause != nil {
			err = cause
		} else if c := w.CauseWithin(ab, err, LostGrace); c != nil {
			err = c
		}
		var pl *PeerLostError
		if results == nil && !errors.As(err, &pl) { // the server waits for the end: tell it why none comes
			t.C.SendError(err)
		}
		return result.Result{}, sr, err
	}
	if s.Traits().ConsumesRecv && sr.Iterations != run.total() {
		return result.Result{}, sr, fmt.Errorf("the server received %d of the client's %d SENDs", sr.Iterations, run.total())
	}
	r, err := bidirResult(measure.BaseResult(s, ep), s, run, *sr.Bidir)
	return r, sr, err
}

// bidirResult is the result of a bidirectional test from the client's run
// and the server's direction: both sides' figures, and their sums.
func bidirResult(r result.Result, s spec.Spec, run BidirRun, srv proto.Direction) (result.Result, error) {
	cli := result.NewSideResult(s.Size, run.Ops, run.warmed, run.Last-run.First)
	sv := result.NewSideResult(s.Size, srv.Ops, srv.Warmup, srv.DurationNS)
	r.Bidirectional, r.Sides = true, &result.BidirSides{Client: cli, Server: sv}
	r.Iterations, r.Warmup = cli.Ops+sv.Ops, cli.Warmup+sv.Warmup
	r.DurationNS = max(cli.DurationNS, sv.DurationNS)
	r.Bandwidth = cli.Bandwidth.Plus(sv.Bandwidth)
	r.CPU = &result.CPUUsage{ClientUserNS: run.user, ClientSysNS: run.sys, ClientUSPerMsg: measure.PerMsgUS(run.user+run.sys, r.Iterations)}
	if err := run.SetLatency(&r); err != nil {
		return result.Result{}, err
	}
	return r, nil
}

// respond is the server side of a bidirectional test whose QP is
// connected: its own direction, the barrier and the result.
func (bidirKind) Respond(t *ServerTest) error {
	c, spec, eps := t.C, t.Spec, t.EPs
	eng := eps.Probe.Eng
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	fail := func(err error) {
		cancel(err)
		eng.Abort()
	}
	warmup, measuring := make(chan struct{}), make(chan struct{})
	side := &bidirSide{ep: eps.Probe, s: spec, o: measure.Options{CPU: ServerCPU(t.CPUs, 0), NodeCPUs: eps.Probe.Dev.NodeCPUs()}, ctx: ctx,
		startWarmup: warmup, measure: measuring,
		warmed: func(time.Duration) error { return c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseWarm}) },
	}
	type ran struct {
		run BidirRun
		err error
	}
	done := make(chan ran, 1)
	go func() {
		r, err := side.run()
		done <- ran{r, err}
	}()
	defer eps.Probe.Dev.OnEvent(fail)()                // a fatal event of the device ends the test at once
	counters := device.SnapshotCounters(eps.Probe.Dev) // before the start message: before any traffic
	marks := device.NewMarkSeries(eps.Probe.Dev)       // the client's interval marks (bench/timeline)
	if err := c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseStart}); err != nil {
		fail(err)
		<-done
		return err
	}
	stopBeat := Heartbeat(c) // until the result or error: the client's watch
	defer stopBeat()
	ended := make(chan error, 1)
	go func() { // the client's barrier, heartbeats and end
		var end proto.Ready
		err := readBidirClient(c, warmup, measuring, &end, marks)
		if err != nil {
			fail(fmt.Errorf("client lost during the test: %w", err))
		} else {
			eng.SetStop(end.Total) // a SEND side receives until the client's total
		}
		ended <- err
	}()
	var r ran
	var endErr error
	gotEnd := false
	select {
	case r = <-done:
	case endErr = <-ended:
		gotEnd = true
		r = <-done // a lost client aborted it
		if endErr != nil {
			return fmt.Errorf("client lost during the test: %w", endErr)
		}
	}
	if r.err != nil {
		// the client reads this in place of the server's warm or result, and
		// answers with its error, or has sent its end already
		stopBeat()
		c.SendError(r.err)
		if !gotEnd {
			endErr = <-ended
		}
		if endErr != nil {
			return fmt.Errorf("%v; then: %w", r.err, endErr)
		}
		return nil // in step: the client has the error and sent its end
	}
	if !gotEnd {
		if err := <-ended; err != nil {
			return fmt.Errorf("client lost during the test: %w", err)
		}
	}
	res := proto.ServerResult{Iterations: int64(eng.Iterations()), CPUUserNS: r.run.user, CPUSysNS: r.run.sys,
		Bidir: r.run.direction(), Counters: counters.ServerDeltas(), IntervalCounters: marks.Series()}
	if err := timeline.Fit(&res); err != nil {
		t.Log.Printf("%s: %v", spec.Name(), err)
	}
	stopBeat()
	return c.Send(proto.MsgResult, res)
}

// readBidirClient reads the client's messages of a bidirectional test:
// warmup (closes warmup), measure (closes measuring), heartbeats, until its
// end (*end). Each within ctrl.HeartbeatTimeout.
func readBidirClient(c ctrl.Chan, warmup, measuring chan struct{}, end *proto.Ready, marks *timeline.Server) error {
	next := proto.PhaseWarmup
	for {
		var r proto.Ready
		if err := c.RecvTimeout(proto.MsgReady, &r, ctrl.HeartbeatTimeout); err != nil {
			return err
		}
		switch {
		case r.Phase == proto.PhaseAlive:
		case r.Phase == proto.PhaseMark && next == proto.PhaseEnd: // while measuring
			marks.Mark(r.Mark)
		case r.Phase == next && next == proto.PhaseWarmup:
			close(warmup)
			next = proto.PhaseMeasure
		case r.Phase == next && next == proto.PhaseMeasure:
			close(measuring)
			next = proto.PhaseEnd
		case r.Phase == next && next == proto.PhaseEnd:
			*end = r
			return nil
		default:
			return fmt.Errorf("client sent %q in a bidirectional test, expected %q", r.Phase, next)
		}
	}
}
