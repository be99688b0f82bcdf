package peer

import (
	"context"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
)

// The bandwidth loop kinds (loopOf) but -b's (bidir.go): the client's
// loop, ib_send_bw's receiver, and the passive server of the WRITE, READ
// and atomic tools.

// bwClient is the bandwidth client: each size's loop with perftest's BW
// peak (and -D's window), then its figures to a passive server.
type bwClient struct{}

func (bwClient) run(_ context.Context, p *dropInSide, run *Outcome) error {
	s := p.s
	if err := p.eng.openPeak(false); err != nil {
		return err
	}
	defer p.eng.closePeak()
	for i, n := range p.sizes {
		sz, err := p.enter(i, n)
		if err != nil {
			return err
		}
		if err := p.eng.armPeak(); err != nil {
			return err
		}
		r, err := p.eng.bw(sz)
		if err != nil {
			return sizeErr(p.all, n, err)
		}
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
	return sendPerftestReport(p.ex, p.mine[0], p.withGID, s, run.Results[last])
}

// sendReceiver is ib_send_bw's receiver: each size's -n messages per QP
// (or -D's duration, without the sync after), timed on this side.
type sendReceiver struct{}

func (sendReceiver) run(_ context.Context, p *dropInSide, run *Outcome) error {
	for i, n := range p.sizes {
		sz, err := p.enter(i, n)
		if err != nil {
			return err
		}
		r, err := p.eng.receive(sz)
		if err != nil && p.s.Duration > 0 { // -D's error names no size
			return err
		}
		if err != nil {
			return sizeErr(p.all, n, err)
		}
		run.Results = append(run.Results, r)
		if p.s.Duration > 0 {
			continue
		}
		if err := p.sync("sync after", n); err != nil {
			return err
		}
	}
	return nil
}

// bwPassive is a passive bandwidth server (WRITE, READ, atomics): it waits
// for the client's loop, and its result is the client's report.
type bwPassive struct{}

func (bwPassive) run(_ context.Context, p *dropInSide, run *Outcome) error {
	s, ex := p.s, p.ex
	ex.SetTimeout(passiveTimeout(p.cfg.Timeout, s, p.sizes))
	if _, err := ex.Dest(p.mine[0], p.withGID, "barrier after the loop"); err != nil {
		return err
	}
	ex.SetTimeout(p.cfg.Timeout)
	rep, err := ex.SwapBWReport(wire.BWReport{Size: uint64(s.Size)})
	if err != nil {
		return err
	}
	r := p.eng.base(s)
	r.Iterations = int64(rep.Iters)
	r.Bandwidth = mibBandwidth(rep.BWAvg, rep.MsgRateAvg)
	if rep.BWPeak > 0 {
		pk := mibBandwidth(rep.BWPeak, 0)
		r.PerftestPeak = &pk
	}
	run.Results = []result.Result{r}
	return nil
}
