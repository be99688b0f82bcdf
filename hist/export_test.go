package hist

// RankValue exposes rankValue to the tests of the rank convention, which
// use data sets too small to back the percentiles they check.
func (h *Histogram) RankValue(p float64) int64 { return h.rankValue(p) }
