package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The loop part of the drop-in facing perftest (perftestpeer.go): what
// each side does once its QPs are connected and the barrier after RTR is
// done: the timed loop or the passive wait, the reports, the closing
// handshake.

// perftestSide is one side's state once its QPs are connected.
type perftestSide struct {
	cfg     PerftestConfig
	s       spec.Spec // cfg.Spec as RunPerftest adjusted it
	wc      *wire.Conn
	nc      net.Conn
	dev     *Device
	eps     *testEndpoints
	qps     []*endpoint // eps.measured()
	mine    []wire.Dest // this side's records, one per QP
	withGID bool
	cc      *PerftestCMConn // -R: the rdma_cm channel, else nil
	env     result.Env      // sideEnv's, collected before the first record swap (RunPerftest)
}

// perftestLoop runs the loop part of RunPerftest.
func perftestLoop(ctx context.Context, run *PerftestRun, p perftestSide) (*PerftestRun, error) {
	cfg, s, wc, dev, eps, qps, mine, withGID, cc := p.cfg, p.s, p.wc, p.dev, p.eps, p.qps, p.mine, p.withGID, p.cc
	ep := eps.probe
	env := p.env
	env.PathMTU, env.InlineSizeGranted = run.MTU, ep.inline
	run.Env = env
	abort := context.AfterFunc(ctx, func() {
		for _, e := range qps {
			e.eng.Abort()
		}
	})
	defer abort()
	all := len(cfg.Sizes) > 0 // perftest's -a (RUN_ALL)
	sizes := cfg.Sizes
	if !all {
		sizes = []int{s.Size}
	}
	// sized is s for message size n, its engines set to n (-a; one size:
	// as created)
	sized := func(n int) (spec.Spec, error) {
		sz := s
		sz.Size = n
		if !all {
			return sz, nil
		}
		for _, e := range qps {
			e.eng.ResetCounters()
			if err := e.eng.SetPerftestSize(n, e.inline > 0 && n <= e.inline); err != nil {
				return sz, err
			}
		}
		return sz, nil
	}
	before, after := perftestSizeSwaps(s, all)
	// sync is perftest's record swap before or after a size of -a, where its
	// tool has one
	sync := func(what string, n int) error {
		if (what == "sync before" && !before) || (what == "sync after" && !after) {
			return nil
		}
		_, err := wc.Dest(mine[0], withGID, fmt.Sprintf("%s %d bytes", what, n))
		return err
	}
	// enter starts size i of the run, n bytes: the sync before it (the
	// first size's is the barrier after RTR), then its spec and engines
	enter := func(i, n int) (spec.Spec, error) {
		if i > 0 {
			if err := sync("sync before", n); err != nil {
				return spec.Spec{}, err
			}
		}
		return sized(n)
	}
	switch {
	case s.Mode == result.ModeLat && run.Timed:
		// perftest's interval on both sides: post to post (rb_pt_lat_reply,
		// SetPerftestInterval), its two largest samples dropped (-n runs)
		var eng latEngine = ep.eng
		reply := (s.Op == result.OpSend && !cfg.Client) || (s.Op == result.OpWrite && cfg.Client) // the side that waits first (see rb_pt_lat_reply)
		if reply {
			eng = replyEngine{ep.eng}
		} else {
			ep.eng.SetPerftestInterval()
		}
		for i, n := range sizes {
			sz, err := enter(i, n)
			if err != nil {
				return run, err
			}
			ep.eng.ResetReply()
			e := eng
			if s.Duration <= 0 {
				e = &perftest.DropTop2{LatLoop: eng}
			}
			r, err := perftestLat(e, ep, sz, cfg.Run)
			if err != nil {
				return run, sizeErr(all, n, perftest.Lost(s, errors.Is(err, verbs.ErrTimeout), err))
			}
			run.Results = append(run.Results, r)
		}
	case s.Mode == result.ModeLat: // a passive side: the client's loop runs until its closing record
		wc.Timeout = passiveTimeout(cfg.Timeout, s, sizes)
		run.Results = []result.Result{baseResult(s, ep)}
	case s.Bidirectional: // -b: both sides send (perftestbidir.go)
		stamps, err := newPeakStamps(qps[:1], s, cfg.Peak)
		if err != nil {
			return run, err
		}
		defer stamps.close()
		r, err := perftestBidir(ctx, p, s, stamps)
		if err != nil {
			return run, err
		}
		run.Results = []result.Result{r}
	case cfg.Client:
		stamps, err := newPeakStamps(qps, s, cfg.Peak)
		if err != nil {
			return run, err
		}
		defer stamps.close()
		for i, n := range sizes {
			sz, err := enter(i, n)
			if err != nil {
				return run, err
			}
			if err := stamps.arm(); err != nil {
				return run, err
			}
			var r result.Result
			if len(qps) > 1 {
				r, _, err = measureBWMulti(qps, sz, cfg.Run)
			} else {
				r, _, err = measureBW(ep, sz, cfg.Run)
			}
			if err != nil {
				return run, sizeErr(all, n, err)
			}
			r.PerftestPeak = stamps.peak(n)
			if s.Duration > 0 { // -D: perftest's figures are the middle's
				if w, ok := perftest.Window(r, s.Duration, perftest.Margin(s.Duration)); ok {
					r = w
				}
			}
			run.Results = append(run.Results, r)
			if err := sync("sync after", n); err != nil {
				return run, err
			}
		}
		last := len(run.Results) - 1 // perftest's passive server gets the last size's report only
		if err := sendPerftestReport(wc, mine[0], withGID, s, run.Results[last]); err != nil {
			return run, err
		}
	case s.Op == result.OpSend: // the receiver: perftest's client sends -n messages per QP
		for i, n := range sizes {
			sz, err := enter(i, n)
			if err != nil {
				return run, err
			}
			engs := make([]*verbs.Engine, len(qps))
			for i, e := range qps {
				if all {
					e.eng.ResetAbort()
				}
				e.eng.SetStop(qpIters(s.Iters, len(qps), i))
				engs[i] = e.eng
			}
			if s.Duration > 0 { // -D: receive for the duration, count the middle's messages
				r, err := perftestReceiveFor(engs, sz, ep)
				if err != nil {
					return run, err
				}
				run.Results = append(run.Results, r)
				continue
			}
			t0 := verbs.Now()
			if _, err := verbs.BWServerMulti(engs); err != nil {
				return run, sizeErr(all, n, perftest.Lost(s, errors.Is(err, verbs.ErrTimeout), err))
			}
			r := baseResult(sz, ep)
			r.Iterations, r.DurationNS = s.Iters, verbs.Now()-t0
			r.Bandwidth = result.NewBandwidth(n, s.Iters, r.DurationNS)
			run.Results = append(run.Results, r)
			if err := sync("sync after", n); err != nil {
				return run, err
			}
		}
	default: // WRITE, READ, atomics: passive; the table is the client's figures (of its last size with -a)
		wc.Timeout = passiveTimeout(cfg.Timeout, s, sizes)
		if _, err := wc.Dest(mine[0], withGID, "barrier after the loop"); err != nil {
			return run, err
		}
		wc.Timeout = cfg.Timeout
		rep, err := wc.SwapBWReport(wire.BWReport{Size: uint64(s.Size)})
		if err != nil {
			return run, err
		}
		r := baseResult(s, ep)
		r.Iterations = int64(rep.Iters)
		r.Bandwidth = mibBandwidth(rep.BWAvg, rep.MsgRateAvg)
		if rep.BWPeak > 0 {
			pk := mibBandwidth(rep.BWPeak, 0)
			r.PerftestPeak = &pk
		}
		run.Results = []result.Result{r}
	}
	run.Result = run.Results[len(run.Results)-1]
	if run.Timed {
		conn := perftestConnSetup(dev, eps, cc)
		for i := range run.Results {
			run.Results[i].Connection = conn
		}
		run.Result.Connection = conn
	}
	if perftest.CloseRecord(s, cc != nil) { // not ib_write_lat -R (bench/perftest/peerqp.go)
		if _, err := wc.Dest(mine[0], withGID, "closing handshake"); err != nil && !wire.PeerClosed(err) {
			return run, perftest.LostAtClose(s, cfg.Client, isTimeout(err), err)
		}
	}
	run.End = time.Now()
	if s.Mode == result.ModeBW && cc == nil { // perftest 6.06's bandwidth tools then swap "done", the server first (not with -R)
		wc.Timeout, wc.Client = 5*time.Second, !cfg.Client
		if _, err := wc.Swap("done", []byte("done\x00"), 5); err != nil && !wire.PeerClosed(err) {
			return run, err
		}
	}
	return run, nil
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

// replyEngine runs the ping-pong's wait-first side through measureLat.
type replyEngine struct{ *verbs.Engine }

func (r replyEngine) LatClient(n int) error { return r.LatReply(n) }
