package peer

import (
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// peakStamps are the bandwidth client's post and completion stamps for
// perftest's BW peak (perftest.PeakNS), one mmap'd buffer per QP
// (verbs.Engine.SetPeakStamps); nil where the peak is not computed.
type peakStamps struct {
	qps  []*endpoint.Endpoint
	bufs []*verbs.Buffer
	n    int // stamps per QP
}

// newPeakStamps is the stamps of a bandwidth client's run of s on qps, or
// nil where perftest prints no peak either: -N (on false), a duration run,
// more than perftest.PeakLimit messages.
func newPeakStamps(qps []*endpoint.Endpoint, s spec.Spec, on bool) (*peakStamps, error) {
	if !on || s.Duration > 0 || s.Iters <= 0 || s.Iters > perftest.PeakLimit {
		return nil, nil
	}
	p := &peakStamps{qps: qps, n: int(endpoint.QPIters(s.Iters, len(qps), 0))}
	for range qps {
		b, err := verbs.AllocBuffer(16*p.n, false)
		if err != nil {
			p.close()
			return nil, err
		}
		p.bufs = append(p.bufs, b)
	}
	return p, nil
}

// arm zeroes the stamps and turns stamping on, before a size's loop.
func (p *peakStamps) arm() error {
	if p == nil {
		return nil
	}
	for i, e := range p.qps {
		if err := e.Eng.SetPeakStamps(p.bufs[i], p.n); err != nil {
			return err
		}
	}
	return nil
}

// peak is perftest's BW peak of the loop just run with size-byte
// messages (nil without stamps or a window), and turns stamping off.
func (p *peakStamps) peak(size int) *result.Bandwidth {
	if p == nil {
		return nil
	}
	var qs []perftest.PeakStamps
	for _, e := range p.qps {
		posted, completed := e.Eng.PeakStamps()
		qs = append(qs, perftest.PeakStamps{Posted: posted, Completed: completed})
	}
	ns, ok := perftest.PeakNS(qs)
	for _, e := range p.qps {
		e.Eng.SetPeakStamps(nil, 0) //nolint:errcheck // off never fails
	}
	if !ok {
		return nil
	}
	mib, gbit := perftest.PeakMiBPerSec(size, ns)
	return &result.Bandwidth{MiBPerSec: mib, MBPerSec: mib * (1 << 20) / 1e6, GbitPerSec: gbit, Mpps: 1e3 / ns}
}

// close frees the buffers (after the engines stopped stamping).
func (p *peakStamps) close() {
	if p == nil {
		return
	}
	for _, e := range p.qps {
		e.Eng.SetPeakStamps(nil, 0) //nolint:errcheck // off never fails
	}
	for _, b := range p.bufs {
		b.Close()
	}
}
