package bench

import (
	"context"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// perftest's -b (duplex) facing a perftest tool: both sides run the
// sender's loop towards each other on QP 0 (bidir.go's bidirSide, without
// rdmabench's control-connection barrier: perftest's record swap is the
// barrier), each times its own, then the two swap their reports (size,
// iterations, peak, average, message rate) and each prints the sums, with
// its own iteration count, as perftest's print_full_bw_report does.

// perftestBidir runs one size of a -b test on p's QP 0 and returns this
// side's result: the sums of both sides' figures, Sides each side's.
func perftestBidir(ctx context.Context, p perftestSide, s Spec, stamps *peakStamps) (result.Result, error) {
	ep := p.eps.probe
	if s.Op != result.OpSend { // perftest's WRITE and READ tools swap once more before a duplex loop
		if _, err := p.wc.Dest(p.mine[0], p.withGID, "sync before the loops (-b)"); err != nil {
			return result.Result{}, err
		}
	}
	if s.Op == result.OpSend {
		ep.eng.SetStop(s.Iters) // the peer's -n messages arrive while this side sends its own
	}
	if err := stamps.arm(); err != nil {
		return result.Result{}, err
	}
	side := &bidirSide{ep: ep, s: s, o: p.cfg.Run, ctx: ctx}
	br, err := side.run()
	if err != nil {
		return result.Result{}, err
	}
	peak := stamps.peak(s.Size)
	mine := result.NewSideResult(s.Size, br.ops, 0, br.last-br.first)
	rep := wire.BWReport{Size: uint64(s.Size), Iters: uint64(br.ops), BWAvg: mine.Bandwidth.MiBPerSec, MsgRateAvg: mine.Bandwidth.Mpps}
	if peak != nil {
		rep.BWPeak = peak.MiBPerSec
	}
	got, err := p.wc.SwapBWReport(rep)
	if err != nil {
		return result.Result{}, err
	}
	peer := result.SideResult{Ops: int64(got.Iters), Bytes: int64(got.Iters) * int64(s.Size), Bandwidth: mibBandwidth(got.BWAvg, got.MsgRateAvg)}
	r := baseResult(s, ep)
	r.Bidirectional, r.Sides = true, &result.BidirSides{Client: mine, Server: peer}
	if !p.cfg.Client {
		r.Sides = &result.BidirSides{Client: peer, Server: mine}
	}
	r.Iterations, r.DurationNS = mine.Ops+peer.Ops, mine.DurationNS
	r.Bandwidth = mine.Bandwidth.Plus(peer.Bandwidth)
	r.Intervals = br.intervals
	if rep.BWPeak+got.BWPeak > 0 {
		pk := mibBandwidth(rep.BWPeak+got.BWPeak, 0)
		r.PerftestPeak = &pk
	}
	lat := br.lat
	if lat == nil {
		lat = hist.New()
	}
	if err := r.SetLatency(lat, 1); err != nil {
		return result.Result{}, fmt.Errorf("encode histogram: %w", err)
	}
	return r, nil
}

// mibBandwidth is a rate perftest reports in MiB/s (its "MB/sec") and
// messages per µs.
func mibBandwidth(mib, mpps float64) result.Bandwidth {
	return result.Bandwidth{MiBPerSec: mib, MBPerSec: mib * (1 << 20) / 1e6, GbitPerSec: mib * (1 << 20) * 8 / 1e9, Mpps: mpps}
}
