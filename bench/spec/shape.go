package spec

import (
	"fmt"
	"math"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Traffic shaping (--limit-bw, --limit-msgrate): the C loop paces the
// client's posts (verbs.Engine.SetPace).

// MinLimitMsgRate is the lowest rate limit, messages/s: slower pacing
// would leave the loop idle long enough to look like no progress.
const MinLimitMsgRate = 10

// paceOf is the message rate that limitBW (bytes/s) and limitMsgRate
// (messages/s) allow for messages of size bytes: the lower, 0 for none.
func paceOf(limitBW, limitMsgRate float64, size int) float64 {
	r := limitMsgRate
	if limitBW > 0 && size > 0 {
		if byBW := limitBW / float64(size); r == 0 || byBW < r {
			r = byBW
		}
	}
	return r
}

// Pace is the total message rate the spec's measured senders are limited
// to, 0 for none; only bandwidth tests' are.
func (s Spec) Pace() float64 {
	if s.Mode != result.ModeBW || s.Load != nil {
		return 0
	}
	return paceOf(s.LimitBW, s.LimitMsgRate, s.Size)
}

// LoadPace is the rate each load QP is limited to, 0 for none.
func (s Spec) LoadPace() float64 {
	if s.Load == nil || s.Load.QPs == 0 {
		return 0
	}
	return paceOf(s.LimitBW, s.LimitMsgRate, s.Load.Size) / float64(s.Load.QPs)
}

// validateShape refuses limits that are not finite and positive, rates
// below MinLimitMsgRate, and limits on tests that have nothing to shape.
func (s Spec) validateShape() error {
	for _, l := range []struct {
		flag string
		v    float64
	}{{"--limit-bw", s.LimitBW}, {"--limit-msgrate", s.LimitMsgRate}} {
		if l.v != 0 && !(l.v > 0 && !math.IsInf(l.v, 0)) {
			return fmt.Errorf("%s %v: want a positive finite rate", l.flag, l.v)
		}
	}
	if s.LimitBW == 0 && s.LimitMsgRate == 0 {
		return nil
	}
	if s.Mode == result.ModeLat && s.Load == nil {
		return fmt.Errorf("--limit-bw and --limit-msgrate shape bandwidth tests and the load of latency-under-load tests (--load-qps); %s has neither", s.Name())
	}
	if s.Transport == result.TransportTCP {
		return fmt.Errorf("--limit-bw and --limit-msgrate apply to RDMA tests, not to the TCP baseline")
	}
	size := s.Size
	if s.Load != nil && s.Mode == result.ModeLat {
		size = s.Load.Size
	}
	if r := paceOf(s.LimitBW, s.LimitMsgRate, size); r < MinLimitMsgRate {
		return fmt.Errorf("rate limit of %.3g messages/s (of %d bytes) is below the minimum %d/s", r, size, MinLimitMsgRate)
	}
	return nil
}

// ShapeResult is the rate limit a test ran under, for its result.
func (s Spec) ShapeResult() *result.RateLimit {
	if r := s.Pace(); r > 0 {
		return &result.RateLimit{MsgsPerSec: r, AppliesTo: "measured"}
	}
	if r := s.LoadPace(); r > 0 {
		return &result.RateLimit{MsgsPerSec: r * float64(s.Load.QPs), AppliesTo: "load"}
	}
	return nil
}
