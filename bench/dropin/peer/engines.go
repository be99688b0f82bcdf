package peer

import (
	"context"
	"errors"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// loopEngines is what the loops (loopKind) run on this side's QPs: each
// size's C loop and the setup around it. qpEngines, on the QPs Run
// connected, is the one Run uses; the sequencing tests use a fake that
// logs the calls.
type loopEngines interface {
	// resize resets the engines' counters and sets them to n bytes (-a).
	resize(n int) error
	// base is the result's fields of sz before any figure.
	base(sz spec.Spec) result.Result
	// startLat readies the ping-pong: reply, the side that waits first.
	startLat(reply bool)
	// lat is one size's timed ping-pong.
	lat(sz spec.Spec) (result.Result, error)
	// openPeak starts perftest's BW peak on every QP (or QP 0 alone:
	// first); closePeak ends it.
	openPeak(first bool) error
	closePeak()
	// armPeak readies the peak for the next size's loop (bw).
	armPeak() error
	// bw is one size's bandwidth loop of the client, its peak with it.
	bw(sz spec.Spec) (result.Result, error)
	// receive is one size's receive of ib_send_bw's receiver, timed here.
	receive(sz spec.Spec) (result.Result, error)
	// bidir is -b's loop on QP 0 (its peak armed first), and its peak.
	bidir(ctx context.Context, sz spec.Spec) (kinds.BidirRun, *result.Bandwidth, error)
	// connSetup is the connection setup of the timed side's results.
	connSetup() *result.ConnSetup
}

// qpEngines is loopEngines on the QPs of eps, which Run owns (and closes).
type qpEngines struct {
	cfg    Config
	s      spec.Spec // the run's spec, as Run adjusted it
	all    bool      // perftest's -a
	dev    *device.Device
	cc     *PerftestCMConn // -R, else nil
	eps    *endpoint.Test
	qps    []*endpoint.Endpoint // eps.measured()
	eng    measure.LatEngine    // the ping-pong's, set by startLat
	stamps *peakStamps          // set by openPeak, closed by closePeak
}

func (q *qpEngines) resize(n int) error {
	for _, e := range q.qps {
		e.Eng.ResetCounters()
		if err := e.Eng.SetPerftestSize(n, e.Inline > 0 && n <= e.Inline); err != nil {
			return err
		}
	}
	return nil
}

func (q *qpEngines) base(sz spec.Spec) result.Result { return measure.BaseResult(sz, q.eps.Probe) }

// startLat: perftest's interval on both sides, post to post
// (rb_pt_lat_reply, SetPerftestInterval).
func (q *qpEngines) startLat(reply bool) {
	ep := q.eps.Probe
	q.eng = ep.Eng
	if reply {
		q.eng = replyEngine{ep.Eng}
	} else {
		ep.Eng.SetPerftestInterval()
	}
}

// lat: with -n, the two largest samples dropped.
func (q *qpEngines) lat(sz spec.Spec) (result.Result, error) {
	ep := q.eps.Probe
	ep.Eng.ResetReply()
	e := q.eng
	if sz.Duration <= 0 {
		e = &perftest.DropTop2{LatLoop: q.eng}
	}
	return dropInLat(e, ep, sz, q.cfg.Run)
}

func (q *qpEngines) openPeak(first bool) error {
	qps := q.qps
	if first {
		qps = qps[:1]
	}
	var err error
	q.stamps, err = newPeakStamps(qps, q.s, q.cfg.Peak)
	return err
}

func (q *qpEngines) closePeak() { q.stamps.close() }

func (q *qpEngines) armPeak() error { return q.stamps.arm() }

func (q *qpEngines) bw(sz spec.Spec) (result.Result, error) {
	var r result.Result
	var err error
	if len(q.qps) > 1 {
		r, _, err = kinds.MeasureBWMulti(q.qps, sz, q.cfg.Run)
	} else {
		r, _, err = measure.BW(q.eps.Probe, sz, q.cfg.Run)
	}
	if err != nil {
		return r, err
	}
	r.PerftestPeak = q.stamps.peak(sz.Size)
	return r, nil
}

// receive: -n messages per QP, or -D's duration (its middle's messages).
func (q *qpEngines) receive(sz spec.Spec) (result.Result, error) {
	s, ep := q.s, q.eps.Probe
	engs := make([]*verbs.Engine, len(q.qps))
	for i, e := range q.qps {
		if q.all {
			e.Eng.ResetAbort()
		}
		e.Eng.SetStop(endpoint.QPIters(s.Iters, len(q.qps), i))
		engs[i] = e.Eng
	}
	if s.Duration > 0 {
		return dropInReceiveFor(engs, sz, ep)
	}
	t0 := verbs.Now()
	if _, err := verbs.BWServerMulti(engs); err != nil {
		return result.Result{}, perftest.Lost(s, errors.Is(err, verbs.ErrTimeout), err)
	}
	r := measure.BaseResult(sz, ep)
	r.Iterations, r.DurationNS = s.Iters, verbs.Now()-t0
	r.Bandwidth = result.NewBandwidth(sz.Size, s.Iters, r.DurationNS)
	return r, nil
}

// bidir: with SEND, the peer's -n messages arrive while this side sends
// its own.
func (q *qpEngines) bidir(ctx context.Context, sz spec.Spec) (kinds.BidirRun, *result.Bandwidth, error) {
	ep := q.eps.Probe
	if sz.Op == result.OpSend {
		ep.Eng.SetStop(sz.Iters)
	}
	if err := q.stamps.arm(); err != nil {
		return kinds.BidirRun{}, nil, err
	}
	br, err := kinds.BidirAlone(ctx, ep, sz, q.cfg.Run)
	if err != nil {
		return br, nil, err
	}
	return br, q.stamps.peak(sz.Size), nil
}

func (q *qpEngines) connSetup() *result.ConnSetup { return dropInConnSetup(q.dev, q.eps, q.cc) }

// replyEngine runs the ping-pong's wait-first side through measure.Lat.
type replyEngine struct{ *verbs.Engine }

func (r replyEngine) LatClient(n int) error { return r.LatReply(n) }
