package spec

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// BidirInterval is Spec.TimedInterval of a bidirectional test.
const BidirInterval = "bidirectional bandwidth: both sides post at once from one barrier, each from its first post to its last " +
	"completion; the total is the sum of both sides' rates (perftest -b); latency: the client's signaled work requests, post to completion"

// validateBidir refuses what a bidirectional test does not support, by name.
func (s Spec) validateBidir() error {
	if !s.Bidirectional {
		return nil
	}
	switch {
	case s.Mode != result.ModeBW:
		return fmt.Errorf("-b (bidirectional) applies to bandwidth tests (--mode bw), not to mode %s: a latency ping-pong already runs both ways", s.Mode)
	case s.Transport == result.TransportTCP:
		return fmt.Errorf("-b (bidirectional) applies to RDMA tests, not to the TCP baseline")
	case s.NumQPs() > 1:
		return fmt.Errorf("-b (bidirectional) with --qps %d is not supported: a bidirectional test runs on one QP", s.QPs)
	case s.Traits().ConsumesRecv && s.Unreliable():
		return fmt.Errorf("-b (bidirectional) SEND on %s QPs is not supported: a lost message would leave its receiver waiting "+
			"for it (use --qp-type rc; WRITE runs on uc)", s.QPTypeLabel())
	case s.Traits().ConsumesRecv && s.Event:
		return fmt.Errorf("-b (bidirectional) SEND with --event is not supported: each side polls its send and receive completions in one loop")
	case s.Verify:
		return fmt.Errorf("-b (bidirectional) with --verify is not supported: the verify pass checks one direction's payloads " +
			"after the measured run; run --verify without -b")
	case s.MRModeOrDefault() == result.MRModePerOp:
		return fmt.Errorf("-b (bidirectional) with --mr-mode per-op is not supported: per-op registration is the client's; " +
			"the server's operations would run on pooled memory")
	}
	return nil
}
