package kinds

import (
	"errors"
	"fmt"
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
	"github.com/rdmabench/rdmabench/internal/testhook"
	"github.com/rdmabench/rdmabench/verbs"
)

// responders are the server's loops of a latency or bandwidth test
// (latKind, bwKind, multiKind, loadKind) on the measured QPs.
type responders struct {
	// active: the server's CPU takes part (it receives, or answers a
	// ping-pong); else its loops are the NIC's and nothing runs here.
	active bool
	// oneThread: one thread polls every QP's receive CQ
	// (verbs.BWServerMulti) instead of one loop per QP.
	oneThread bool
	// loop is one QP's responder loop (LatServer, BWServer).
	loop func(e *verbs.Engine) error
}

// serveLoops is the server's half of a latency or bandwidth test: the
// responder loops r, the start, the client's end and the result.
func (t *ServerTest) serveLoops(r responders) error {
	qps := t.EPs.Measured()
	counters := device.SnapshotCounters(qps[0].Dev) // before the start message: before any traffic
	marks := device.NewMarkSeries(qps[0].Dev)       // the client's interval marks (bench/timeline)
	rr := newResponderRun(qps, r.active)
	var loops []Loop
	for _, ep := range qps {
		loops = append(loops, ep.Eng)
	}
	ab := NewTestAbort(loops...)
	defer ab.Disarm()
	// a fatal event of the device ends the test at once, and the client hears which
	defer qps[0].Dev.OnEvent(func(err error) {
		ab.Abort(err)
		rr.fail(err)
	})()
	rr.start(r, t.CPUs, ab)
	if err := t.C.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseStart}); err != nil {
		rr.stop()
		return err
	}
	stopBeat := Heartbeat(t.C) // until the result or error: the client's watch
	defer stopBeat()
	var end proto.Ready
	msgs := awaitEndMarks(t.C, &end, marks)
	select {
	case err := <-msgs:
		if err != nil {
			rr.stop()
			return fmt.Errorf("client lost during the test: %w", err)
		}
	case loopErr := <-rr.firstErr:
		// A loop failed (or timed out): tell the client, then wait for its end.
		rr.stop()
		stopBeat()
		return reportLoopError(t.C, loopErr, msgs)
	}
	totals := end.Totals
	if len(totals) == 0 && len(qps) == 1 {
		totals = []int64{end.Total}
	}
	if r.active && len(totals) != len(qps) {
		rr.stop()
		return fmt.Errorf("client's end gives %d per-QP totals for %d QPs", len(totals), len(qps))
	}
	loopErr := rr.finish(t.Spec, totals)
	res := proto.ServerResult{Counters: counters.ServerDeltas(), IntervalCounters: marks.Series()}
	for i, ep := range qps {
		res.Iterations += int64(ep.Eng.Iterations())
		res.CPUUserNS += rr.cpuUser[i]
		res.CPUSysNS += rr.cpuSys[i]
	}
	if loopErr != nil {
		res.Error = loopErr.Error()
	}
	if err := timeline.Fit(&res); err != nil {
		t.Log.Printf("%s: %v", t.Spec.Name(), err)
	}
	stopBeat()
	if err := t.C.Send(proto.MsgResult, res); err != nil {
		return err
	}
	return loopErr
}

// responderRun is the server's responder loops of one test, running: one
// per measured QP, each on its own locked thread, or one thread for all
// (responders.oneThread). None when the server's CPU takes no part.
type responderRun struct {
	qps      []*endpoint.Endpoint
	active   bool
	dones    []chan error // each QP's loop's end (active only)
	firstErr chan error   // the first loop error or fatal event
	// each QP's thread's CPU time, ns (one thread: QP 0's); written
	// before its done
	cpuUser, cpuSys []int64
}

func newResponderRun(qps []*endpoint.Endpoint, active bool) *responderRun {
	return &responderRun{qps: qps, active: active, dones: make([]chan error, len(qps)), firstErr: make(chan error, 1),
		cpuUser: make([]int64, len(qps)), cpuSys: make([]int64, len(qps))}
}

// fail records err as the first error, unless there is one.
func (rr *responderRun) fail(err error) {
	select {
	case rr.firstErr <- err:
	default:
	}
}

// start starts the loops of r (none unless r.active) on cpus (ServerCPU);
// a loop's error also goes to firstErr, and an abort's cause (ab)
// replaces the loop's own error.
func (rr *responderRun) start(r responders, cpus []int, ab *TestAbort) {
	qps := rr.qps
	if r.oneThread {
		for i := range qps {
			rr.dones[i] = make(chan error, 1)
		}
		go func() {
			which, err := func() (int, error) {
				defer testhook.ResponderThreads.Enter()()
				defer measure.UnlockThread()
				if err := measure.LockThread(ServerCPU(cpus, 0), qps[0].Dev.NodeCPUs()); err != nil {
					return 0, err
				}
				cpu := measure.StartCPU()
				defer func() { rr.cpuUser[0], rr.cpuSys[0] = cpu.Stop() }()
				engs := make([]*verbs.Engine, len(qps))
				for i, ep := range qps {
					engs[i] = ep.Eng
				}
				return verbs.BWServerMulti(engs)
			}()
			if err != nil {
				if err = ab.Err(err); err != nil {
					err = fmt.Errorf("QP %d: %w", which, err)
					rr.fail(err)
				}
			}
			for i := range rr.dones {
				rr.dones[i] <- err
			}
		}()
		return
	}
	if !r.active {
		return
	}
	for i, ep := range qps {
		rr.dones[i] = make(chan error, 1)
		go func() {
			err := func() error {
				defer testhook.ResponderThreads.Enter()()
				defer measure.UnlockThread()
				if err := measure.LockThread(ServerCPU(cpus, i), ep.Dev.NodeCPUs()); err != nil {
					return err
				}
				cpu := measure.StartCPU()
				defer func() { rr.cpuUser[i], rr.cpuSys[i] = cpu.Stop() }()
				return r.loop(ep.Eng)
			}()
			if err != nil {
				err = ab.Err(err) // an event's abort: the event
			}
			if err != nil && len(qps) > 1 {
				err = fmt.Errorf("QP %d: %w", i, err)
			}
			if err != nil {
				rr.fail(err)
			}
			rr.dones[i] <- err
		}()
	}
}

// stop aborts the loops and waits for them.
func (rr *responderRun) stop() {
	if rr.active {
		for i, ep := range rr.qps {
			ep.Eng.Abort()
			<-rr.dones[i]
		}
	}
}

// finish lets each loop run to the client's total of its QP (totals) and
// waits for it, within EngineTimeout and a margin; an unreliable SEND
// bandwidth receiver until its stream goes quiet (awaitQuiet). It returns
// the loops' errors.
func (rr *responderRun) finish(spec spec.Spec, totals []int64) error {
	loopErrs := make([]error, len(rr.qps))
	if rr.active {
		var wg sync.WaitGroup
		for i, ep := range rr.qps {
			ep.Eng.SetStop(totals[i])
			wg.Add(1)
			go func() {
				defer wg.Done()
				if spec.Unreliable() && spec.Traits().ConsumesRecv && spec.Mode == result.ModeBW {
					// UC/UD drop messages a full receive queue cannot take: take what
					// arrived until the stream goes quiet, and report the count
					loopErrs[i] = awaitQuiet(ep.Eng, rr.dones[i])
					return
				}
				select {
				case loopErrs[i] = <-rr.dones[i]:
				case <-time.After(endpoint.EngineTimeout + 5*time.Second):
					ep.Eng.Abort()
					loopErrs[i] = fmt.Errorf("responder did not reach %d iterations: %w", totals[i], <-rr.dones[i])
				}
			}()
		}
		wg.Wait()
	}
	return errors.Join(loopErrs...)
}

// unreliableQuiet is how long an unreliable bandwidth receiver waits for
// more messages after the client's end before it counts the rest as lost.
var unreliableQuiet = 500 * time.Millisecond

// awaitQuiet waits for the bandwidth receiver loop (done) to reach its stop
// count, or stops it once no message arrived for unreliableQuiet.
func awaitQuiet(eng *verbs.Engine, done <-chan error) error {
	last := eng.Iterations()
	t := time.NewTicker(unreliableQuiet / 5)
	defer t.Stop()
	quietSince := time.Now()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if n := eng.Iterations(); n != last {
				last, quietSince = n, time.Now()
			} else if time.Since(quietSince) >= unreliableQuiet {
				eng.Abort()
				if err := <-done; err != nil && !errors.Is(err, verbs.ErrAborted) {
					return err
				}
				return nil
			}
		}
	}
}

// reportLoopError tells the client why the server's loop failed, then waits
// for the client's end of the test (msgs, from awaitEnd).
func reportLoopError(c ctrl.Chan, loopErr error, msgs <-chan error) error {
	c.SendError(loopErr)
	if err := <-msgs; err != nil {
		return fmt.Errorf("%v; then: %w", loopErr, err)
	}
	return nil
}

// awaitEnd reads the client's heartbeats until its end message. The channel
// then gets nil (and *end is filled), or the error that ended the wait: a
// lost connection, or no heartbeat within ctrl.HeartbeatTimeout.
func awaitEnd(c ctrl.Chan, end *proto.Ready) <-chan error { return awaitEndMarks(c, end, nil) }

// awaitEndMarks is awaitEnd that also takes the client's interval marks
// into marks (nil: ignored, as heartbeats), in the goroutine that reads.
func awaitEndMarks(c ctrl.Chan, end *proto.Ready, marks *timeline.Server) <-chan error {
	msgs := make(chan error, 1)
	go func() {
		for {
			var r proto.Ready
			if err := c.RecvTimeout(proto.MsgReady, &r, ctrl.HeartbeatTimeout); err != nil {
				msgs <- err
				return
			}
			if r.Phase == proto.PhaseEnd {
				*end = r
				msgs <- nil
				return
			}
			if r.Phase == proto.PhaseMark {
				marks.Mark(r.Mark)
			}
		}
	}()
	return msgs
}

// ServerCPU is the CPU of the server's responder loop of QP i: cpus round
// robin, or -1 (no pinning) for an empty list.
func ServerCPU(cpus []int, i int) int {
	if len(cpus) == 0 {
		return -1
	}
	return cpus[i%len(cpus)]
}
