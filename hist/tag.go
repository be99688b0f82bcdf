package hist

// SetTag sets the tag written with the histogram in an .hlog interval line
// (Tag=...); Reset clears it.
func (h *Histogram) SetTag(tag string) { h.h.SetTag(tag) }
