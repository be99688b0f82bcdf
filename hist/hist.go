package hist

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Geometry of every Histogram made by New.
const (
	// LowestDiscernible is the smallest value, in ns, that the buckets tell
	// apart from 0.
	LowestDiscernible int64 = 1
	// HighestTrackable is the largest value, in ns, that has its own bucket
	// (1 hour). Larger values are counted in its bucket; Max stays exact.
	HighestTrackable = int64(time.Hour)
	// SignificantDigits is the number of significant decimal digits each
	// bucketed value keeps (a relative error of at most 0.1 %).
	SignificantDigits = 3
)

// A Histogram is a latency histogram in nanoseconds with an exact minimum,
// maximum and count. Its memory is fixed at creation.
//
// The zero value is not usable: create one with New or Decode. A Histogram is
// not safe for concurrent use and must not be copied by value.
type Histogram struct {
	h   *hdrhistogram.Histogram
	top int64 // largest value recordable into h; larger values are clamped to it
	min int64 // exact minimum, math.MaxInt64 while empty
	max int64 // exact maximum, 0 while empty (all recorded values are >= 0)
}

// New returns an empty Histogram covering 1 ns to 1 hour with 3 significant
// digits.
func New() *Histogram {
	return wrap(hdrhistogram.New(LowestDiscernible, HighestTrackable, SignificantDigits))
}

func wrap(h *hdrhistogram.Histogram) *Histogram {
	return &Histogram{h: h, top: h.HighestTrackableValue(), min: math.MaxInt64}
}

// Record records one latency of ns nanoseconds. Negative values are recorded
// as 0. It does not allocate.
func (h *Histogram) Record(ns int64) {
	h.RecordN(ns, 1)
}

// RecordN records n occurrences of a latency of ns nanoseconds. Negative
// values are recorded as 0; n <= 0 records nothing. It does not allocate.
func (h *Histogram) RecordN(ns, n int64) {
	if n <= 0 {
		return
	}
	ns = max(ns, 0)
	h.min = min(h.min, ns)
	h.max = max(h.max, ns)
	// The value is in range, so RecordValues cannot fail unless the total
	// count would pass math.MaxInt64 (292 years of 1 ns samples).
	_ = h.h.RecordValues(min(ns, h.top), n)
}

// RecordSlice records vals[i] >> shift for every element of vals, as
// nanoseconds. It drains a raw sample buffer (for example one filled by the C
// engine with TSC ticks pre-scaled by a power of two) and does not allocate.
// Values above math.MaxInt64 after the shift saturate at math.MaxInt64.
func (h *Histogram) RecordSlice(vals []uint64, shift uint) {
	lo, hi, top := h.min, h.max, h.top
	for _, raw := range vals {
		v := int64(min(raw>>shift, math.MaxInt64))
		lo = min(lo, v)
		hi = max(hi, v)
		_ = h.h.RecordValues(min(v, top), 1)
	}
	h.min, h.max = lo, hi
}

// Merge adds every value recorded in other to h. No value is dropped, even
// when other was decoded with a different geometry. other is not modified.
func (h *Histogram) Merge(other *Histogram) {
	if other.Count() == 0 {
		return
	}
	if other == h {
		other = &Histogram{h: h.h.Clone(), top: h.top, min: h.min, max: h.max}
	}
	h.min = min(h.min, other.min)
	h.max = max(h.max, other.max)
	if sameGeometry(h.h, other.h) {
		// Same buckets: the library's Merge cannot drop anything.
		h.h.Merge(other.h)
		return
	}
	// Different buckets (a decoded foreign histogram): re-record each bucket's
	// lowest equivalent value, as Java's add does, clamped into h's range.
	for _, b := range other.h.Distribution() {
		if b.Count != 0 {
			_ = h.h.RecordValues(min(max(b.From, 0), h.top), b.Count)
		}
	}
}

func sameGeometry(a, b *hdrhistogram.Histogram) bool {
	return a.LowestTrackableValue() == b.LowestTrackableValue() &&
		a.HighestTrackableValue() == b.HighestTrackableValue() &&
		a.SignificantFigures() == b.SignificantFigures()
}

// Reset removes all recorded values, keeping the memory for reuse.
func (h *Histogram) Reset() {
	h.h.Reset()
	h.min, h.max = math.MaxInt64, 0
}

// Count returns the number of values recorded. It is exact.
func (h *Histogram) Count() int64 {
	return h.h.TotalCount()
}

// Min returns the smallest value recorded, in ns, or 0 if h is empty. It is
// exact, except after Decode (see there).
func (h *Histogram) Min() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.min
}

// Max returns the largest value recorded, in ns, or 0 if h is empty. It is
// exact even above HighestTrackable, except after Decode (see there).
func (h *Histogram) Max() int64 {
	return h.max
}

// Mean returns the mean of the recorded values in ns, computed from bucket
// midpoints (within 0.1 %), or 0 if h is empty.
func (h *Histogram) Mean() float64 {
	return h.h.Mean()
}

// StdDev returns the population standard deviation of the recorded values in
// ns, computed from bucket midpoints, or 0 if h is empty.
func (h *Histogram) StdDev() float64 {
	return h.h.StdDev()
}

// ByteSize returns the approximate memory held by h, in bytes. It is fixed
// when h is created and does not change as values are recorded.
func (h *Histogram) ByteSize() int {
	return h.h.ByteSize()
}

// Percentile returns the value in ns at percentile p, where p is a percent in
// [0, 100] (99.9 means p99.9; never pass a quantile such as 0.999).
//
// ok is false when the percentile's 95 % confidence interval (PercentileCI)
// runs off the end of the data, and when p is outside [0, 100]: p50 needs 6
// samples, p90 36, p99 368, p99.9 3,688, p99.99 36,887. Percentile 100 is
// therefore never ok; use Max. Percentile 0 is the exact
// minimum. Otherwise the value at rank round(p/100*Count()) is reported at the
// histogram's resolution, clamped to [Min(), Max()]; see the package
// documentation for the rank convention.
func (h *Histogram) Percentile(p float64) (ns int64, ok bool) {
	return h.PercentileAt(p, DefaultConfidence)
}

// PercentileAt is Percentile with the n/a rule at confidence conf (in
// (0, 1)) rather than DefaultConfidence.
func (h *Histogram) PercentileAt(p, conf float64) (ns int64, ok bool) {
	if !backed(p, h.Count(), conf) {
		return 0, false
	}
	return h.rankValue(p), true
}

// rankValue is the value at percentile p's rank, backed or not.
func (h *Histogram) rankValue(p float64) int64 {
	if p == 0 {
		return h.min
	}
	return h.clamp(h.h.ValueAtPercentile(p))
}

// backed reports whether percentile p (in percent) is backed by n samples
// at confidence conf: whether its order-statistic confidence interval
// (OrderStatCI) stays inside the data. Percentile 0 (the exact minimum) is
// backed by any sample; percentile 100 never is.
func backed(p float64, n int64, conf float64) bool {
	if !(p >= 0 && p <= 100) || n <= 0 {
		return false
	}
	if p == 0 {
		return true
	}
	_, _, ok := OrderStatCI(n, p/100, conf)
	return ok
}

func (h *Histogram) clamp(v int64) int64 {
	return min(max(v, h.min), h.max)
}

// Value is a latency in ns that may be absent because too few samples back
// it (see Percentile). Its zero value is absent.
type Value struct {
	NS int64 // nanoseconds; meaningful only when OK
	OK bool  // whether enough samples back the value
}

// MarshalJSON encodes v as an integer number of ns, or null when !v.OK.
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.OK {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, v.NS, 10), nil
}

// UnmarshalJSON decodes a number of ns (rounded to an integer), or null as an
// absent value.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = Value{}
		return nil
	}
	ns, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(b), 64)
		if ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("hist: value %q is not a number of ns or null", b)
		}
		ns = int64(math.Round(f))
	}
	*v = Value{NS: ns, OK: true}
	return nil
}

// Format returns v.NS divided by unitDiv with prec decimals (unitDiv 1000
// gives µs: 46210 ns formats as "46.21" with prec 2), or "n/a" when !v.OK.
func (v Value) Format(unitDiv float64, prec int) string {
	if !v.OK {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, float64(v.NS)/unitDiv)
}

// String returns v in ns, such as "46210ns", or "n/a".
func (v Value) String() string {
	if !v.OK {
		return "n/a"
	}
	return fmt.Sprintf("%dns", v.NS)
}

// Summary is a snapshot of a Histogram's statistics. All values are in ns.
// Percentiles that too few samples back are absent (JSON null).
type Summary struct {
	Count  int64   `json:"count"`
	Min    int64   `json:"min_ns"`
	Max    int64   `json:"max_ns"`
	Mean   float64 `json:"mean_ns"`
	StdDev float64 `json:"stddev_ns"`
	P50    Value   `json:"p50_ns"`
	P90    Value   `json:"p90_ns"`
	P99    Value   `json:"p99_ns"`
	P999   Value   `json:"p99_9_ns"`
	P9999  Value   `json:"p99_99_ns"`
}

// Summary returns the count, exact min and max, mean, standard deviation and
// the p50, p90, p99, p99.9 and p99.99 percentiles of h.
func (h *Histogram) Summary() Summary {
	pct := func(p float64) Value {
		ns, ok := h.Percentile(p)
		return Value{NS: ns, OK: ok}
	}
	return Summary{
		Count:  h.Count(),
		Min:    h.Min(),
		Max:    h.Max(),
		Mean:   h.Mean(),
		StdDev: h.StdDev(),
		P50:    pct(50),
		P90:    pct(90),
		P99:    pct(99),
		P999:   pct(99.9),
		P9999:  pct(99.99),
	}
}

// Encode returns h in HdrHistogram's compressed V2 base64 form ("HISTF..."),
// as read by the Java and C implementations. The exact min and max are not
// part of the format.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("hist: encode: %w", err)
	}
	return string(b), nil
}

// Decode returns the Histogram encoded in s by Encode or by another
// HdrHistogram implementation, keeping the geometry found in s. The count is
// exact, but min and max are restored from the buckets: Min is the lowest and
// Max the highest value equivalent to the extreme buckets (within 0.1 %; Max
// may be above the true maximum, and a value recorded above HighestTrackable
// comes back as about 1 hour).
func Decode(s string) (*Histogram, error) {
	d, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("hist: decode: %w", err)
	}
	if d.LowestTrackableValue() < 1 || d.HighestTrackableValue() < d.LowestTrackableValue() {
		return nil, errors.New("hist: decode: invalid histogram range")
	}
	h := wrap(d)
	if d.TotalCount() > 0 {
		h.min, h.max = d.Min(), d.Max()
	}
	return h, nil
}
