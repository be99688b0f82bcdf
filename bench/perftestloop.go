package bench

import (
	"context"
	"net"
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// The loop part of the drop-in facing perftest (perftestpeer.go): what
// each side does once its QPs are connected and the barrier after RTR is
// done: the timed loop or the passive wait, the reports, the closing
// handshake.

// perftestSide is one side's state once its QPs are connected.
type perftestSide struct {
	cfg     PerftestConfig
	s       Spec // cfg.Spec as RunPerftest adjusted it
	wc      *wire.Conn
	nc      net.Conn
	dev     *Device
	eps     *testEndpoints
	qps     []*endpoint // eps.measured()
	mine    []wire.Dest // this side's records, one per QP
	withGID bool
	cc      *PerftestCMConn // -R: the rdma_cm channel, else nil
}

// perftestLoop runs the loop part of RunPerftest.
func perftestLoop(ctx context.Context, run *PerftestRun, p perftestSide) (*PerftestRun, error) {
	cfg, s, wc, nc, dev, eps, qps, mine, withGID, cc := p.cfg, p.s, p.wc, p.nc, p.dev, p.eps, p.qps, p.mine, p.withGID, p.cc
	ep := eps.probe
	env, _, err := sideEnv(dev, nc.LocalAddr(), cfg.Run.CPU)
	if err != nil {
		return run, err
	}
	env.PathMTU, env.InlineSizeGranted = run.MTU, ep.inline
	run.Env = env
	abort := context.AfterFunc(ctx, func() {
		for _, e := range qps {
			e.eng.Abort()
		}
	})
	defer abort()
	switch {
	case s.Mode == result.ModeLat && run.Timed:
		var eng latEngine = ep.eng
		if (s.Op == result.OpSend && !cfg.Client) || (s.Op == result.OpWrite && cfg.Client) { // the side that waits first (see rb_pt_lat_reply)
			ep.eng.ResetReply()
			eng = replyEngine{ep.eng}
		}
		if run.Result, _, err = measureLat(eng, baseResult(s, ep), s, cfg.Run); err != nil {
			return run, err
		}
	case s.Mode == result.ModeLat: // a passive side: the client's loop runs until its closing record
		wc.Timeout = passiveTimeout(cfg.Timeout, s)
		run.Result = baseResult(s, ep)
	case cfg.Client && len(qps) > 1:
		if run.Result, _, err = measureBWMulti(qps, s, cfg.Run); err != nil {
			return run, err
		}
		if err := sendPerftestReport(wc, mine[0], withGID, s, run.Result); err != nil {
			return run, err
		}
	case cfg.Client:
		if run.Result, _, err = measureBW(ep, s, cfg.Run); err != nil {
			return run, err
		}
		if err := sendPerftestReport(wc, mine[0], withGID, s, run.Result); err != nil {
			return run, err
		}
	case s.Op == result.OpSend: // the receiver: perftest's client sends -n messages per QP
		engs := make([]*verbs.Engine, len(qps))
		for i, e := range qps {
			e.eng.SetStop(qpIters(s.Iters, len(qps), i))
			engs[i] = e.eng
		}
		t0 := verbs.Now()
		if _, err := verbs.BWServerMulti(engs); err != nil {
			return run, err
		}
		r := baseResult(s, ep)
		r.Iterations, r.DurationNS = s.Iters, verbs.Now()-t0
		r.Bandwidth = result.NewBandwidth(s.Size, s.Iters, r.DurationNS)
		run.Result = r
	default: // WRITE, READ, atomics: passive; the table is the client's figures
		wc.Timeout = passiveTimeout(cfg.Timeout, s)
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
		r.Bandwidth = result.Bandwidth{MiBPerSec: rep.BWAvg, MBPerSec: rep.BWAvg * (1 << 20) / 1e6, GbitPerSec: rep.BWAvg * (1 << 20) * 8 / 1e9, Mpps: rep.MsgRateAvg}
		if rep.BWPeak > 0 {
			r.Intervals = []result.Interval{{Bandwidth: result.Bandwidth{MiBPerSec: rep.BWPeak, GbitPerSec: rep.BWPeak * (1 << 20) * 8 / 1e9}}}
		}
		run.Result = r
	}
	if run.Timed {
		run.Result.Connection = perftestConnSetup(dev, eps, cc)
	}
	if _, err := wc.Dest(mine[0], withGID, "closing handshake"); err != nil && !wire.PeerClosed(err) {
		return run, err
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

// sendPerftestReport gives a passive perftest server the client's figures
// (not for SEND: perftest's ib_send_bw server measures its own).
func sendPerftestReport(wc *wire.Conn, mine wire.Dest, withGID bool, s Spec, r result.Result) error {
	if s.Op == result.OpSend {
		return nil
	}
	if _, err := wc.Dest(mine, withGID, "barrier after the loop"); err != nil {
		return err
	}
	peak := r.Bandwidth.MiBPerSec
	for _, iv := range r.Intervals {
		peak = max(peak, iv.Bandwidth.MiBPerSec)
	}
	_, err := wc.SwapBWReport(wire.BWReport{Size: uint64(s.Size), Iters: uint64(r.Iterations), BWPeak: peak,
		BWAvg: r.Bandwidth.MiBPerSec, MsgRateAvg: r.Bandwidth.Mpps})
	return err
}

// passiveTimeout bounds a passive side's wait for the client's loop: the
// step timeout, plus 1 ms an iteration and the data at 1 MB/s (a loaded
// software-RDMA guest moves 4 MB/s).
func passiveTimeout(step time.Duration, s Spec) time.Duration {
	return max(step, wire.DefaultTimeout) + time.Duration(s.Iters)*time.Millisecond + time.Duration(s.Iters*int64(s.Size))*time.Microsecond
}

// replyEngine runs the ping-pong's wait-first side through measureLat.
type replyEngine struct{ *verbs.Engine }

func (r replyEngine) LatClient(n int) error { return r.LatReply(n) }
