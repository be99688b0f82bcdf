package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Latency against load (--load-sweep): a latency test with load QPs is
// run as a sweep. First the load alone, unshaped, as a bandwidth test of
// the load QPs: its peak rate. Then the latency probes open loop without
// load, and under the load paced (in the C loop) at each fraction of the
// peak. The probe rate is --rate, or a fifth of what the unloaded closed
// loop's mean latency allows (at most maxProbeRate).

// maxProbeRate bounds the probe rate the sweep picks, operations/s.
const maxProbeRate = 10000

// runLoadSweep runs the sweep of s: its results (the peak, the unloaded
// probe, one per fraction) and the sweep.
func runLoadSweep(ctx context.Context, cl *Client, s spec.Spec, o measure.Options) ([]result.Result, *result.LoadSweep, error) {
	var out []result.Result
	run := func(what string, t spec.Spec) (result.Result, error) {
		r, err := cl.Run(ctx, t, o)
		if err != nil {
			return r, fmt.Errorf("load sweep, %s: %w", what, err)
		}
		out = append(out, r)
		return r, nil
	}
	// the load alone, unshaped: its peak
	peakSpec := spec.Spec{Op: s.Load.Op, Mode: result.ModeBW, Size: s.Load.Size, QPs: s.Load.QPs, TxDepth: s.Load.TxDepth,
		CQMod: s.Load.CQMod, Duration: max(2*time.Second, s.Duration/2), Warmup: -1, MTU: s.MTU, SL: s.SL, TClass: s.TClass,
		QPType: s.QPType, RDMACM: s.RDMACM, Percentiles: s.Percentiles, Confidence: s.Confidence,
		NoRelaxedOrdering: s.NoRelaxedOrdering, NoAddrStep: s.NoAddrStep, AddrCycle: s.AddrCycle,
		CompVector: s.CompVector, CompVectorSpread: s.CompVectorSpread, PKeyIndex: s.PKeyIndex}.WithDefaults()
	peak, err := run("the load's peak", peakSpec)
	if err != nil {
		return out, nil, err
	}
	sw := &result.LoadSweep{Test: s.Name(), LoadOp: s.Load.Op, LoadSize: s.Load.Size, LoadQPs: s.Load.QPs,
		PeakMsgsPerSec: peak.Bandwidth.Mpps * 1e6, PeakMBPerSec: peak.Bandwidth.MBPerSec}
	if !(sw.PeakMsgsPerSec > 0) {
		return out, nil, fmt.Errorf("load sweep: the load's peak is 0 messages/s")
	}
	probe := s
	probe.Load, probe.LoadSweep = nil, nil
	if probe.Rate == 0 { // a closed loop first: how fast may the probes go?
		cl0, err := run("closed-loop probe", probe)
		if err != nil {
			return out, nil, err
		}
		probe.Rate = maxProbeRate
		if mean := cl0.Latency.Mean * measure.DivisorOf(s); mean > 0 { // the mean, not the p50: a heavy tail queues the probes
			probe.Rate = math.Min(maxProbeRate, math.Floor(0.2/(mean/1e9)))
		}
		probe.Rate = math.Max(probe.Rate, spec.MinRate)
	}
	sw.ProbeRate = probe.Rate
	point := func(f float64, r result.Result) result.LoadPoint {
		p := result.LoadPoint{Offered: f, OfferedMsgsPerSec: f * sw.PeakMsgsPerSec, P50: r.Latency.P50, P99: r.Latency.P99, P99_9: r.Latency.P99_9}
		if r.Load != nil {
			p.AchievedMsgsPerSec, p.AchievedMBPerSec = r.Load.Bandwidth.Mpps*1e6, r.Load.Bandwidth.MBPerSec
		}
		return p
	}
	r0, err := run("unloaded probe", probe)
	if err != nil {
		return out, nil, err
	}
	sw.Points = append(sw.Points, point(0, r0))
	for _, f := range s.LoadSweep {
		t := probe
		t.Load = s.Load
		t.LimitMsgRate = f * sw.PeakMsgsPerSec
		r, err := run(fmt.Sprintf("load %g%%", f*100), t)
		if err != nil {
			return out, nil, err
		}
		sw.Points = append(sw.Points, point(f, r))
	}
	sw.FindKnee()
	return out, sw, nil
}
