package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The loop part of the drop-in facing perftest (peer.go): what each
// side does once its QPs are connected and the barrier after RTR is
// done: each size's timed loop or the passive wait, the reports, the
// closing handshake (finish).

// dropInSide is one side of a test against perftest: what Run's
// steps set up, in order (the device and channel, the exchange's
// parameters and environment, the QPs and records), then the loop's sizes.
type dropInSide struct {
	cfg     Config
	s       spec.Spec // cfg.Spec as Run adjusted it
	wc      *wire.Conn
	nc      net.Conn
	dev     *device.Device
	cc      *PerftestCMConn // -R: the rdma_cm channel, else nil
	env     result.Env      // device.SideEnv's, collected before the first record swap (negotiate)
	eps     *endpoint.Test
	qps     []*endpoint.Endpoint // eps.measured()
	mine    []wire.Dest          // this side's records, one per QP
	withGID bool
	all     bool  // perftest's -a (RUN_ALL): cfg.Sizes on the same QPs
	sizes   []int // the message sizes in order: cfg.Sizes, or s.Size alone
}

// loop runs the loop part of Run: this side's part of each size
// (the timed loop, or the passive wait), then the closing handshake.
func (p *dropInSide) loop(ctx context.Context, run *Outcome) (*Outcome, error) {
	env := p.env
	env.PathMTU, env.InlineSizeGranted = run.MTU, p.eps.Probe.Inline
	run.Env = env
	abort := context.AfterFunc(ctx, func() {
		for _, e := range p.qps {
			e.Eng.Abort()
		}
	})
	defer abort()
	p.all, p.sizes = len(p.cfg.Sizes) > 0, p.cfg.Sizes
	if !p.all {
		p.sizes = []int{p.s.Size}
	}
	var err error
	switch s := p.s; {
	case s.Mode == result.ModeLat && run.Timed:
		err = p.latTimed(run)
	case s.Mode == result.ModeLat: // a passive side: the client's loop runs until its closing record
		p.wc.Timeout = passiveTimeout(p.cfg.Timeout, s, p.sizes)
		run.Results = []result.Result{measure.BaseResult(s, p.eps.Probe)}
	case s.Bidirectional: // -b: both sides send (dropinbidir.go)
		err = p.bidir(ctx, run)
	case p.cfg.Client:
		err = p.bwClient(run)
	case s.Op == result.OpSend: // the receiver: perftest's client sends -n messages per QP
		err = p.sendReceiver(run)
	default: // WRITE, READ, atomics: passive; the table is the client's figures (of its last size with -a)
		err = p.passiveBW(run)
	}
	if err != nil {
		return run, err
	}
	return run, p.finish(run)
}

// sized is s for message size n, its engines set to n (-a; one size: as
// created).
func (p *dropInSide) sized(n int) (spec.Spec, error) {
	sz := p.s
	sz.Size = n
	if !p.all {
		return sz, nil
	}
	for _, e := range p.qps {
		e.Eng.ResetCounters()
		if err := e.Eng.SetPerftestSize(n, e.Inline > 0 && n <= e.Inline); err != nil {
			return sz, err
		}
	}
	return sz, nil
}

// sync is perftest's record swap before or after a size of -a, where its
// tool has one (perftestSizeSwaps).
func (p *dropInSide) sync(what string, n int) error {
	before, after := perftestSizeSwaps(p.s, p.all)
	if (what == "sync before" && !before) || (what == "sync after" && !after) {
		return nil
	}
	_, err := p.wc.Dest(p.mine[0], p.withGID, fmt.Sprintf("%s %d bytes", what, n))
	return err
}

// enter starts size i of the run, n bytes: the sync before it (the first
// size's is the barrier after RTR), then its spec and engines.
func (p *dropInSide) enter(i, n int) (spec.Spec, error) {
	if i > 0 {
		if err := p.sync("sync before", n); err != nil {
			return spec.Spec{}, err
		}
	}
	return p.sized(n)
}

// latTimed is a timed latency side: perftest's interval on both sides,
// post to post (rb_pt_lat_reply, SetPerftestInterval), its two largest
// samples dropped (-n runs).
func (p *dropInSide) latTimed(run *Outcome) error {
	s, ep := p.s, p.eps.Probe
	var eng measure.LatEngine = ep.Eng
	reply := (s.Op == result.OpSend && !p.cfg.Client) || (s.Op == result.OpWrite && p.cfg.Client) // the side that waits first (see rb_pt_lat_reply)
	if reply {
		eng = replyEngine{ep.Eng}
	} else {
		ep.Eng.SetPerftestInterval()
	}
	for i, n := range p.sizes {
		sz, err := p.enter(i, n)
		if err != nil {
			return err
		}
		ep.Eng.ResetReply()
		e := eng
		if s.Duration <= 0 {
			e = &perftest.DropTop2{LatLoop: eng}
		}
		r, err := dropInLat(e, ep, sz, p.cfg.Run)
		if err != nil {
			return sizeErr(p.all, n, perftest.Lost(s, errors.Is(err, verbs.ErrTimeout), err))
		}
		run.Results = append(run.Results, r)
	}
	return nil
}

// bidir is -b's one size on QP 0, with perftest's BW peak (dropinbidir.go).
func (p *dropInSide) bidir(ctx context.Context, run *Outcome) error {
	stamps, err := newPeakStamps(p.qps[:1], p.s, p.cfg.Peak)
	if err != nil {
		return err
	}
	defer stamps.close()
	r, err := dropInBidir(ctx, p, p.s, stamps)
	if err != nil {
		return err
	}
	run.Results = []result.Result{r}
	return nil
}

// bwClient is the bandwidth client: each size's loop with perftest's BW
// peak (and -D's window), then its figures to a passive server.
func (p *dropInSide) bwClient(run *Outcome) error {
	s, qps := p.s, p.qps
	stamps, err := newPeakStamps(qps, s, p.cfg.Peak)
	if err != nil {
		return err
	}
	defer stamps.close()
	for i, n := range p.sizes {
		sz, err := p.enter(i, n)
		if err != nil {
			return err
		}
		if err := stamps.arm(); err != nil {
			return err
		}
		var r result.Result
		if len(qps) > 1 {
			r, _, err = kinds.MeasureBWMulti(qps, sz, p.cfg.Run)
		} else {
			r, _, err = measure.BW(p.eps.Probe, sz, p.cfg.Run)
		}
		if err != nil {
			return sizeErr(p.all, n, err)
		}
		r.PerftestPeak = stamps.peak(n)
		if s.Duration > 0 { // -D: perftest's figures are the middle's
			if w, ok := perftest.Window(r, s.Duration, perftest.Margin(s.Duration)); ok {
				r = w
			}
		}
		run.Results = append(run.Results, r)
		if err := p.sync("sync after", n); err != nil {
			return err
		}
	}
	last := len(run.Results) - 1 // perftest's passive server gets the last size's report only
	return sendPerftestReport(p.wc, p.mine[0], p.withGID, s, run.Results[last])
}

// sendReceiver is ib_send_bw's receiver: each size's -n messages per QP
// (or -D's duration), timed on this side.
func (p *dropInSide) sendReceiver(run *Outcome) error {
	s, qps, ep := p.s, p.qps, p.eps.Probe
	for i, n := range p.sizes {
		sz, err := p.enter(i, n)
		if err != nil {
			return err
		}
		engs := make([]*verbs.Engine, len(qps))
		for q, e := range qps {
			if p.all {
				e.Eng.ResetAbort()
			}
			e.Eng.SetStop(endpoint.QPIters(s.Iters, len(qps), q))
			engs[q] = e.Eng
		}
		if s.Duration > 0 { // -D: receive for the duration, count the middle's messages
			r, err := dropInReceiveFor(engs, sz, ep)
			if err != nil {
				return err
			}
			run.Results = append(run.Results, r)
			continue
		}
		t0 := verbs.Now()
		if _, err := verbs.BWServerMulti(engs); err != nil {
			return sizeErr(p.all, n, perftest.Lost(s, errors.Is(err, verbs.ErrTimeout), err))
		}
		r := measure.BaseResult(sz, ep)
		r.Iterations, r.DurationNS = s.Iters, verbs.Now()-t0
		r.Bandwidth = result.NewBandwidth(n, s.Iters, r.DurationNS)
		run.Results = append(run.Results, r)
		if err := p.sync("sync after", n); err != nil {
			return err
		}
	}
	return nil
}

// passiveBW is a passive bandwidth server (WRITE, READ, atomics): it waits
// for the client's loop, and its result is the client's report.
func (p *dropInSide) passiveBW(run *Outcome) error {
	s, wc := p.s, p.wc
	wc.Timeout = passiveTimeout(p.cfg.Timeout, s, p.sizes)
	if _, err := wc.Dest(p.mine[0], p.withGID, "barrier after the loop"); err != nil {
		return err
	}
	wc.Timeout = p.cfg.Timeout
	rep, err := wc.SwapBWReport(wire.BWReport{Size: uint64(s.Size)})
	if err != nil {
		return err
	}
	r := measure.BaseResult(s, p.eps.Probe)
	r.Iterations = int64(rep.Iters)
	r.Bandwidth = mibBandwidth(rep.BWAvg, rep.MsgRateAvg)
	if rep.BWPeak > 0 {
		pk := mibBandwidth(rep.BWPeak, 0)
		r.PerftestPeak = &pk
	}
	run.Results = []result.Result{r}
	return nil
}

// finish ends the run: the timed side's connection setup on its results,
// the closing handshake, and the bandwidth tools' "done".
func (p *dropInSide) finish(run *Outcome) error {
	s, wc, cc := p.s, p.wc, p.cc
	run.Result = run.Results[len(run.Results)-1]
	if run.Timed {
		conn := dropInConnSetup(p.dev, p.eps, cc)
		for i := range run.Results {
			run.Results[i].Connection = conn
		}
		run.Result.Connection = conn
	}
	if perftest.CloseRecord(s, cc != nil) { // not ib_write_lat -R (bench/perftest/peerqp.go)
		if _, err := wc.Dest(p.mine[0], p.withGID, "closing handshake"); err != nil && !wire.PeerClosed(err) {
			return perftest.LostAtClose(s, p.cfg.Client, isTimeout(err), err)
		}
	}
	run.End = time.Now()
	if s.Mode == result.ModeBW && cc == nil { // perftest 6.06's bandwidth tools then swap "done", the server first (not with -R)
		wc.Timeout, wc.Client = 5*time.Second, !p.cfg.Client
		if _, err := wc.Swap("done", []byte("done\x00"), 5); err != nil && !wire.PeerClosed(err) {
			return err
		}
	}
	return nil
}

// sizeErr names the size of -a (all) that err ended.
func sizeErr(all bool, n int, err error) error {
	if !all {
		return err
	}
	return fmt.Errorf("%d bytes: %w", n, err)
}

// perftestSizeSwaps is where perftest 6.06 swaps QP 0's record around each
// size of -a (all): before each size's loop but the first (whose swap is
// the barrier after RTR) in the SEND tools, whose receiver posts that
// size's receives first, and after each size's loop in ib_send_bw. The
// other tools run their sizes back to back: the WRITE ping-pong paces
// itself, and the READ, atomic and WRITE bandwidth servers are passive.
func perftestSizeSwaps(s spec.Spec, all bool) (before, after bool) {
	if !all || s.Op != result.OpSend {
		return false, false
	}
	return true, s.Mode == result.ModeBW
}

// sendPerftestReport gives a passive perftest server the client's figures
// (not for SEND: perftest's ib_send_bw server measures its own).
func sendPerftestReport(wc *wire.Conn, mine wire.Dest, withGID bool, s spec.Spec, r result.Result) error {
	if s.Op == result.OpSend {
		return nil
	}
	if _, err := wc.Dest(mine, withGID, "barrier after the loop"); err != nil {
		return err
	}
	peak := 0.0 // perftest's, where computed (as perftest sends 0 without one)
	if r.PerftestPeak != nil {
		peak = r.PerftestPeak.MiBPerSec
	}
	_, err := wc.SwapBWReport(wire.BWReport{Size: uint64(s.Size), Iters: uint64(r.Iterations), BWPeak: peak,
		BWAvg: r.Bandwidth.MiBPerSec, MsgRateAvg: r.Bandwidth.Mpps})
	return err
}

// passiveTimeout bounds a passive side's wait for the client's loop: the
// step timeout, plus 1 ms an iteration and the data at 1 MB/s (a loaded
// software-RDMA guest moves 4 MB/s), for each size of the run.
func passiveTimeout(step time.Duration, s spec.Spec, sizes []int) time.Duration {
	t := max(step, wire.DefaultTimeout) + s.Duration // -D: the client's whole run
	for _, n := range sizes {
		t += time.Duration(s.Iters)*time.Millisecond + time.Duration(s.Iters*int64(n))*time.Microsecond
	}
	return t
}

// replyEngine runs the ping-pong's wait-first side through measure.Lat.
type replyEngine struct{ *verbs.Engine }

func (r replyEngine) LatClient(n int) error { return r.LatReply(n) }
