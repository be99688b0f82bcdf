package bench

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/timeline"
	"github.com/rdmabench/rdmabench/verbs"
)

// The server's side of one test: set up its endpoints, answer the client's
// traffic and report what it saw.

// runTest is the server side of one test: admission, the connection of
// its data plane, then its kind (serve).
func (s *Server) runTest(c ctrl.Chan, dev *device.Device, spec spec.Spec) error {
	release, err := s.admit(c, spec) // before anything is mapped: see bench/endpoint/budget.go
	if err != nil {
		return err
	}
	defer release()
	t := &serverTest{c: c, spec: spec, cpus: s.cfg.CPUs, log: s.log}
	switch {
	case spec.Transport == result.TransportTCP:
		if t.tcp, err = acceptTCP(c, spec); err != nil {
			return err
		}
		defer t.tcp.close()
	case dev == nil:
		return refuseRDMA(c)
	case spec.RDMACM:
		if t.eps, err = s.connectCM(c, spec); err != nil {
			return err
		}
		defer t.eps.Close()
	default:
		if t.eps, err = connectExchange(c, dev, spec); err != nil {
			return err
		}
		defer t.eps.Close()
	}
	return serveKind(t)
}

// serveKind runs the kind of a test whose data plane is connected, then its
// verify pass (not after a bidirectional test: its server never ran one).
func serveKind(t *serverTest) error {
	if err := kindOf(t.spec).respond(t); err != nil {
		return err
	}
	if t.spec.Verify && !t.spec.Bidirectional { // after the measured run: see verify.go
		return verifyPass{}.respond(t)
	}
	return nil
}

// connectExchange is the server side of a connection by exchange: the
// client's QP numbers and PSNs, then the server's. The endpoints are
// closed on an error.
func connectExchange(c ctrl.Chan, dev *device.Device, spec spec.Spec) (*endpoint.Test, error) {
	// The client sends its QP info right after the test: read it first, so a
	// failure below leaves the session in step for the next test.
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return nil, err
	}
	if err := device.CheckPair(dev, remote, !device.IsLocalAddr(addrOf(c.RemoteAddr())), "server", "client"); err != nil {
		return nil, err
	}
	eps, err := endpoint.NewTest(dev, spec, false)
	if err != nil {
		return nil, err
	}
	if _, err := eps.Connect(remote); err != nil {
		eps.Close()
		return nil, err
	}
	if err := c.Send(proto.MsgQPInfo, eps.Info()); err != nil {
		eps.Close()
		return nil, err
	}
	return eps, nil
}

// connectCM is the server side of an rdma_cm connection: it listens on
// endpoint.CMAddress, tells the client where, accepts the test's QPs and starts
// their engines once the client sent its buffers.
func (s *Server) connectCM(c ctrl.Chan, spec spec.Spec) (_ *endpoint.Test, err error) {
	addr, devName, why, err := endpoint.CMAddress(s.cfg.Device, addrOf(c.LocalAddr()))
	if err != nil {
		return nil, err
	}
	lis, err := endpoint.BindCM(addr)
	if err != nil {
		return nil, fmt.Errorf("rdma_cm listener on %s (%s): %w", addr, why, err)
	}
	if devName = lis.ID.DeviceName(); s.cfg.Device != "" && devName != s.cfg.Device {
		lis.Close()
		return nil, fmt.Errorf("rdma_cm address %s belongs to %s, not to the server's --device %s", addr, devName, s.cfg.Device)
	}
	name, port, _ := endpoint.CMBinding(s.cfg.Device, s.cfg.Port, devName, lis.ID.Port()) // the CM ID's port, not --ib-port
	dev, err := s.cmDevice(name, port)
	if err != nil {
		lis.Close()
		return nil, err
	}
	eps, err := endpoint.NewTest(dev, spec, false)
	if err != nil {
		lis.Close()
		return nil, err
	}
	eps.Lis = lis
	lis.Log = s.log
	defer func() {
		if err != nil {
			eps.Close()
		}
	}()
	all := eps.All()
	if err := lis.Listen(dev, len(all)); err != nil {
		return nil, err
	}
	info := eps.Info()
	info.CMAddr, info.CMPort, info.CMToken = lis.Addr.Addr().String(), int(lis.Addr.Port()), lis.Token[:]
	if err := c.Send(proto.MsgQPInfo, info); err != nil {
		return nil, err
	}
	s.log.Printf("rdma_cm: listening on %s (%s), device %s port %d, %d QPs", lis.Addr, why, devName, dev.Port.Port, len(all))
	abort := make(chan struct{})
	accepted := make(chan error, 1)
	go func() {
		accepted <- lis.AcceptAll(dev, all, time.Now().Add(endpoint.CMTimeout*time.Duration(2+len(all))), abort)
	}()
	// the client's buffers come once its QPs are connected, or its error
	var remote proto.QPInfo
	got := make(chan error, 1)
	go func() { got <- c.RecvTimeout(proto.MsgQPInfo, &remote, endpoint.CMTimeout*time.Duration(3+len(all))) }()
	select {
	case err := <-accepted:
		if err != nil { // the client's connect fails too: take its message
			<-got
			return nil, err
		}
		if err := <-got; err != nil {
			return nil, err
		}
	case err := <-got:
		if err != nil {
			close(abort)
			<-accepted
			return nil, err
		}
		if err := <-accepted; err != nil {
			return nil, err
		}
	}
	if err := eps.StartCM(remote); err != nil {
		return nil, err
	}
	return eps, nil
}

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
func (t *serverTest) serveLoops(r responders) error {
	qps := t.eps.Measured()
	counters := device.SnapshotCounters(qps[0].Dev) // before the start message: before any traffic
	marks := device.NewMarkSeries(qps[0].Dev)       // the client's interval marks (bench/timeline)
	rr := newResponderRun(qps, r.active)
	var loops []aborter
	for _, ep := range qps {
		loops = append(loops, ep.Eng)
	}
	ab := newTestAbort(loops...)
	defer ab.disarm()
	// a fatal event of the device ends the test at once, and the client hears which
	defer qps[0].Dev.OnEvent(func(err error) {
		ab.abort(err)
		rr.fail(err)
	})()
	rr.start(r, t.cpus, ab)
	if err := t.c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseStart}); err != nil {
		rr.stop()
		return err
	}
	stopBeat := heartbeat(t.c) // until the result or error: the client's watch
	defer stopBeat()
	var end proto.Ready
	msgs := awaitEndMarks(t.c, &end, marks)
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
		return reportLoopError(t.c, loopErr, msgs)
	}
	totals := end.Totals
	if len(totals) == 0 && len(qps) == 1 {
		totals = []int64{end.Total}
	}
	if r.active && len(totals) != len(qps) {
		rr.stop()
		return fmt.Errorf("client's end gives %d per-QP totals for %d QPs", len(totals), len(qps))
	}
	loopErr := rr.finish(t.spec, totals)
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
		t.log.Printf("%s: %v", t.spec.Name(), err)
	}
	stopBeat()
	if err := t.c.Send(proto.MsgResult, res); err != nil {
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

// start starts the loops of r (none unless r.active) on cpus (serverCPU);
// a loop's error also goes to firstErr, and an abort's cause (ab)
// replaces the loop's own error.
func (rr *responderRun) start(r responders, cpus []int, ab *testAbort) {
	qps := rr.qps
	if r.oneThread {
		for i := range qps {
			rr.dones[i] = make(chan error, 1)
		}
		go func() {
			which, err := func() (int, error) {
				defer responderThreads.enter()()
				defer measure.UnlockThread()
				if err := measure.LockThread(serverCPU(cpus, 0), qps[0].Dev.NodeCPUs()); err != nil {
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
				if err = ab.err(err); err != nil {
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
				defer responderThreads.enter()()
				defer measure.UnlockThread()
				if err := measure.LockThread(serverCPU(cpus, i), ep.Dev.NodeCPUs()); err != nil {
					return err
				}
				cpu := measure.StartCPU()
				defer func() { rr.cpuUser[i], rr.cpuSys[i] = cpu.Stop() }()
				return r.loop(ep.Eng)
			}()
			if err != nil {
				err = ab.err(err) // an event's abort: the event
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

// threadGauge counts the threads running responder loops, and their peak.
type threadGauge struct{ now, peak atomic.Int64 }

// enter counts one thread until the returned function is called.
func (g *threadGauge) enter() func() {
	n := g.now.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return func() { g.now.Add(-1) }
}

// responderThreads are the server's responder loop threads (tests read
// the peak: a multi-QP test's receivers share one thread).
var responderThreads threadGauge

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
// lost connection, or no heartbeat within heartbeatTimeout.
func awaitEnd(c ctrl.Chan, end *proto.Ready) <-chan error { return awaitEndMarks(c, end, nil) }

// awaitEndMarks is awaitEnd that also takes the client's interval marks
// into marks (nil: ignored, as heartbeats), in the goroutine that reads.
func awaitEndMarks(c ctrl.Chan, end *proto.Ready, marks *timeline.Server) <-chan error {
	msgs := make(chan error, 1)
	go func() {
		for {
			var r proto.Ready
			if err := c.RecvTimeout(proto.MsgReady, &r, heartbeatTimeout); err != nil {
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

// serverCPU is the CPU of the server's responder loop of QP i: cpus round
// robin, or -1 (no pinning) for an empty list.
func serverCPU(cpus []int, i int) int {
	if len(cpus) == 0 {
		return -1
	}
	return cpus[i%len(cpus)]
}
