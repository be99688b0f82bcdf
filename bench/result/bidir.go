package result

// BidirSides are the two sides of a bidirectional test, each with what its
// own operations moved (a READ's data flows towards the side that posts it).
type BidirSides struct {
	Client SideResult `json:"client"`
	Server SideResult `json:"server"`
}

// SideResult is one side's own operations in a bidirectional test.
type SideResult struct {
	Ops        int64     `json:"ops"`               // measured operations
	Bytes      int64     `json:"bytes"`             // ops × message size
	Warmup     int64     `json:"warmup_iterations"` // operations before measuring
	DurationNS int64     `json:"duration_ns"`       // first post to last completion of its measured operations
	Bandwidth  Bandwidth `json:"bandwidth"`         // Bytes and Ops over DurationNS
}

// NewSideResult is the figures of ops measured operations of size bytes
// each over durationNS, after warmup others.
func NewSideResult(size int, ops, warmup, durationNS int64) SideResult {
	return SideResult{Ops: ops, Bytes: ops * int64(size), Warmup: warmup, DurationNS: durationNS,
		Bandwidth: NewBandwidth(size, ops, durationNS)}
}

// Plus is the field-wise sum of two rates: the total of both directions of
// a bidirectional test (perftest -b adds the two sides' averages).
func (b Bandwidth) Plus(o Bandwidth) Bandwidth {
	return Bandwidth{MBPerSec: b.MBPerSec + o.MBPerSec, MiBPerSec: b.MiBPerSec + o.MiBPerSec,
		GbitPerSec: b.GbitPerSec + o.GbitPerSec, Mpps: b.Mpps + o.Mpps}
}
