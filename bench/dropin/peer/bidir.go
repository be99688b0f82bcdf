package peer

import (
	"context"

	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// perftest's -b (duplex) facing a perftest tool: both sides run the
// sender's loop towards each other on QP 0 (kinds.BidirAlone, without
// rdmabench's control-connection barrier: perftest's record swap is the
// barrier), each times its own, then the two swap their reports (size,
// iterations, peak, average, message rate) and each prints the sums, with
// its own iteration count, as perftest's print_full_bw_report does.

// bidirLoop is -b's loop kind (loopOf): one size on QP 0, with
// perftest's BW peak.
type bidirLoop struct{}

func (bidirLoop) run(ctx context.Context, p *dropInSide, run *Outcome) error {
	if err := p.eng.openPeak(true); err != nil {
		return err
	}
	defer p.eng.closePeak()
	r, err := dropInBidir(ctx, p, p.s)
	if err != nil {
		return err
	}
	run.Results = []result.Result{r}
	return nil
}

// dropInBidir runs one size of a -b test on p's QP 0 and returns this
// side's result: the sums of both sides' figures, Sides each side's.
func dropInBidir(ctx context.Context, p *dropInSide, s spec.Spec) (result.Result, error) {
	if s.Op != result.OpSend { // perftest's WRITE and READ tools swap once more before a duplex loop
		if _, err := p.ex.Dest(p.mine[0], p.withGID, "sync before the loops (-b)"); err != nil {
			return result.Result{}, err
		}
	}
	br, peak, err := p.eng.bidir(ctx, s)
	if err != nil {
		return result.Result{}, err
	}
	mine := result.NewSideResult(s.Size, br.Ops, 0, br.Last-br.First)
	rep := wire.BWReport{Size: uint64(s.Size), Iters: uint64(br.Ops), BWAvg: mine.Bandwidth.MiBPerSec, MsgRateAvg: mine.Bandwidth.Mpps}
	if peak != nil {
		rep.BWPeak = peak.MiBPerSec
	}
	got, err := p.ex.SwapBWReport(rep)
	if err != nil {
		return result.Result{}, err
	}
	r := dropInBidirResult(p.eng.base(s), mine, rep, got, p.cfg.Client)
	if err := br.SetLatency(&r); err != nil {
		return result.Result{}, err
	}
	return r, nil
}

// dropInBidirResult is a -b side's result from its own figures (mine,
// and the report it sent) and the peer's report (got): the sums, as
// perftest prints them, and each side's in Sides (the client's and the
// server's, client telling which this side is).
func dropInBidirResult(r result.Result, mine result.SideResult, sent, got wire.BWReport, client bool) result.Result {
	peer := result.SideResult{Ops: int64(got.Iters), Bytes: int64(got.Iters) * int64(got.Size), Bandwidth: mibBandwidth(got.BWAvg, got.MsgRateAvg)}
	r.Bidirectional, r.Sides = true, &result.BidirSides{Client: mine, Server: peer}
	if !client {
		r.Sides = &result.BidirSides{Client: peer, Server: mine}
	}
	r.Iterations, r.DurationNS = mine.Ops+peer.Ops, mine.DurationNS
	r.Bandwidth = mine.Bandwidth.Plus(peer.Bandwidth)
	if sent.BWPeak+got.BWPeak > 0 {
		pk := mibBandwidth(sent.BWPeak+got.BWPeak, 0)
		r.PerftestPeak = &pk
	}
	return r
}

// mibBandwidth is a rate perftest reports in MiB/s (its "MB/sec") and
// messages per µs.
func mibBandwidth(mib, mpps float64) result.Bandwidth {
	return result.Bandwidth{MiBPerSec: mib, MBPerSec: mib * (1 << 20) / 1e6, GbitPerSec: mib * (1 << 20) * 8 / 1e9, Mpps: mpps}
}
