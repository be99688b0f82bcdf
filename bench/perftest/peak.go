package perftest

import (
	"cmp"
	"math"
	"slices"
)

// BW peak as perftest computes it (print_report_bw, docs/perftest.md): the
// best rate over any window of messages i..j, measured from the post of
// message i to the completion seen for message j, where j is a message
// whose completion was stamped (every CQ-moderation-th message and the
// last). perftest records tposted[] for every post and tcompleted[] for
// every signaled completion; the drop-in's C loop records the same
// (verbs.Engine.SetPeakStamps).

// PeakStamps are one QP's stamps (ns, one clock for all QPs): Posted[k]
// is the post of its message k, Completed[k] the completion of its
// signaled message k (and of those before it), 0 where none.
type PeakStamps struct {
	Posted, Completed []int64
}

// PeakLimit is the most messages whose peak is computed (the search is
// quadratic); perftest skips its peak above 20000 iterations as well.
const PeakLimit = 20000

// PeakNS is perftest's peak as the shortest mean time per message over
// every window: min over i <= j of (tc[j] - tp[i]) / (j - i + 1). With
// several QPs the posts and completions of all are counted in the order
// of their stamps, as perftest's one sender thread counts them. ok is
// false when there is no window (no stamps, or more than PeakLimit
// messages).
func PeakNS(qps []PeakStamps) (ns float64, ok bool) {
	var tp []int64
	type done struct{ t, n int64 } // a completion: its time, the messages it completes
	var tc []done
	for _, q := range qps {
		prev := int64(-1)
		for k, t := range q.Posted {
			if t == 0 {
				break // not posted
			}
			tp = append(tp, t)
			if k < len(q.Completed) && q.Completed[k] != 0 {
				tc = append(tc, done{q.Completed[k], int64(k) - prev})
				prev = int64(k)
			}
		}
	}
	if len(tp) == 0 || len(tc) == 0 || len(tp) > PeakLimit {
		return 0, false
	}
	slices.Sort(tp)
	slices.SortStableFunc(tc, func(a, b done) int { return cmp.Compare(a.t, b.t) })
	// last[m] is the index of the last message completion m completes
	last := make([]int64, len(tc))
	seen := int64(0)
	for m, c := range tc {
		seen += c.n
		last[m] = seen - 1
	}
	best := math.Inf(1)
	for i, t0 := range tp {
		for m, c := range tc {
			j := last[m]
			if j < int64(i) {
				continue
			}
			if d := float64(c.t-t0) / float64(j-int64(i)+1); d < best {
				best = d
			}
		}
	}
	if math.IsInf(best, 1) || best <= 0 {
		return 0, false
	}
	return best, true
}

// PeakMiBPerSec is size-byte messages at one per ns nanoseconds, in MiB/s
// (perftest's "MB/sec"), and in 10^9 bit/s.
func PeakMiBPerSec(size int, ns float64) (mib, gbit float64) {
	bps := float64(size) / (ns / 1e9)
	return bps / (1 << 20), bps * 8 / 1e9
}
