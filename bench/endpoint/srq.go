package endpoint

import (
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// Shared receive queues (--srq, perftest's --use-srq).
//
// With --srq, every QP of a side that receives SENDs takes its receives
// from one SRQ of that side's test (verbs.SRQ, created in the test's PD
// before its QPs): the server's QPs (all --qps of them share it) and, in
// latency tests, where the client receives the server's replies, the
// client's QP too, so both directions of the ping-pong pay the same. A
// bandwidth client receives nothing and has none.
//
// The SRQ holds what one QP's receive queue would: the rx depth (latency:
// at most 16 posted, as without --srq). Each engine posts its share of
// them (QPIters) into its own receive area and, in its C loop, re-posts
// one to the SRQ for every message its QP receives; a message takes the
// oldest receive, whichever engine posted it, and the receive's wr_id
// names the area it landed in (the --verify pass reads it there).

// UsesSRQ reports whether one side's QPs of s take their receives from an
// SRQ: the server's, and the client's in latency tests.
func UsesSRQ(s spec.Spec, client bool) bool { return s.SRQ && (!client || s.Mode == result.ModeLat) }

// recvPosts is how many receives one side of a SEND test posts before
// traffic, per QP (or, with --srq, in all): the rx depth, at most 16 in
// latency tests (one message is in flight at a time).
func recvPosts(s spec.Spec) int {
	if s.Mode == result.ModeLat {
		return min(s.RxDepth, 16)
	}
	return s.RxDepth
}

// newSRQ creates the shared receive queue of one side of s in pd, after
// checking the device's limits.
func newSRQ(dev *device.Device, s spec.Spec, pd *verbs.PD) (*verbs.SRQ, error) {
	if err := s.CheckDeviceSRQ(dev.Limits()); err != nil {
		return nil, device.Lacks(err)
	}
	return pd.CreateSRQ(verbs.SRQConfig{MaxWR: s.RxDepth})
}
