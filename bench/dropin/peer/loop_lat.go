package peer

import (
	"context"
	"errors"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// The latency loop kinds (loopOf): the timed side's ping-pong, and the
// passive side of ib_read_lat and the atomics' latency tools.

// latTimed is a timed latency side: perftest's interval on both sides,
// post to post, each size's ping-pong after its sync before (-a, SEND).
type latTimed struct{}

func (latTimed) run(_ context.Context, p *dropInSide, run *Outcome) error {
	s := p.s
	reply := (s.Op == result.OpSend && !p.cfg.Client) || (s.Op == result.OpWrite && p.cfg.Client) // the side that waits first (see rb_pt_lat_reply)
	p.eng.startLat(reply)
	for i, n := range p.sizes {
		sz, err := p.enter(i, n)
		if err != nil {
			return err
		}
		r, err := p.eng.lat(sz)
		if err != nil {
			return sizeErr(p.all, n, perftest.Lost(s, errors.Is(err, verbs.ErrTimeout), err))
		}
		run.Results = append(run.Results, r)
	}
	return nil
}

// latPassive is a passive latency side: no loop of its own; it waits in
// the closing handshake, within passiveTimeout, for the client's loops.
type latPassive struct{}

func (latPassive) run(_ context.Context, p *dropInSide, run *Outcome) error {
	p.ex.SetTimeout(passiveTimeout(p.cfg.Timeout, p.s, p.sizes))
	run.Results = []result.Result{p.eng.base(p.s)}
	return nil
}
