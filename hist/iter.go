package hist

// A Point is one line of a percentile distribution: the value at a
// percentile.
type Point struct {
	Percentile float64 // percent in [0, 100]
	NS         int64   // value at Percentile, ns
	Count      int64   // values recorded at or below NS
}

// Distribution returns the percentile distribution of h on HdrHistogram's
// logarithmic percentile scale, the lines of the .hgrm table (WriteHGRM):
// 5 points per halving of the distance to 100 %, so 0, 10, ... 50, 55, ...
// 75, 77.5, ... 90, ... 99, ... 99.9 ... as far as the samples reach,
// ending with percentile 100 at the largest value. Values are the highest
// value equivalent to their bucket, clamped to [Min(), Max()], in ns; the
// first point (percentile 0) holds Min(). Percentiles never decrease from one
// point to the next, nor do values. It returns nil when h is empty.
//
// Unlike Percentile, it does not apply the n/a rule: points above the
// percentile the samples back are listed with the value at their rank.
func (h *Histogram) Distribution() []Point {
	if h.Count() == 0 {
		return nil
	}
	brs := h.h.CumulativeDistributionWithTicks(hgrmTicksPerHalfDistance)
	out := make([]Point, 0, len(brs)+1)
	for _, b := range brs {
		v := h.clamp(b.ValueAt)
		if b.Quantile == 0 {
			v = h.min
		}
		out = append(out, Point{Percentile: b.Quantile, NS: v, Count: b.Count})
	}
	if len(out) == 0 || out[0].Percentile != 0 {
		out = append([]Point{{Percentile: 0, NS: h.min, Count: 0}}, out...)
	}
	if last := &out[len(out)-1]; last.Percentile == 100 {
		last.NS = h.max
	}
	return out
}

// A Bucket is a run of equivalent values holding recorded values: every
// value from Low to High, both in ns, counts as the same value at the
// histogram's resolution.
type Bucket struct {
	Low, High int64 // clamped to [Min(), Max()]
	Count     int64 // values recorded in the bucket, > 0
}

// Buckets returns the non-empty buckets of h in ascending order of value, or
// nil when h is empty. Their counts add up to Count().
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		out = append(out, Bucket{Low: h.clamp(b.From), High: h.clamp(b.To), Count: b.Count})
	}
	return out
}
