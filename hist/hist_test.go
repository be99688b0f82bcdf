package hist_test

import (
	"encoding/json"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rdmabench/rdmabench/hist"
)

// seq returns a Histogram holding the values lo..hi ns, once each.
func seq(tb testing.TB, lo, hi int64) *hist.Histogram {
	tb.Helper()
	h := hist.New()
	for v := lo; v <= hi; v++ {
		h.Record(v)
	}
	return h
}

// fromValues returns a Histogram holding vals.
func fromValues(tb testing.TB, vals ...int64) *hist.Histogram {
	tb.Helper()
	h := hist.New()
	for _, v := range vals {
		h.Record(v)
	}
	return h
}

// latencies returns n pseudo-random latencies in ns from a fixed seed: mostly
// 1-3 µs with a long tail up to about 500 µs. The generator is written out
// (splitmix64) so that golden files do not depend on math/rand or math.Exp.
func latencies(tb testing.TB, n int, seed uint64) []int64 {
	tb.Helper()
	out := make([]int64, n)
	for i := range out {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		base := 1000 + int64(z%2000)                  // 1-3 µs
		tail := uint(bits.TrailingZeros64(z>>11) / 2) // P(tail >= k) = 4^-k
		out[i] = base << min(tail, 8)
	}
	return out
}

// checkPercentile fails t unless h.Percentile(p) returns (want, wantOK).
// checkPercentile checks the value at percentile p's rank (whether or not
// the samples back it: TestBacking checks that) and, when !wantOK, that
// Percentile refuses it.
func checkPercentile(t *testing.T, h *hist.Histogram, p float64, want int64, wantOK bool) {
	t.Helper()
	if !wantOK {
		if got, ok := h.Percentile(p); ok {
			t.Errorf("Percentile(%v) = %d, want n/a", p, got)
		}
		return
	}
	if got := h.RankValue(p); got != want {
		t.Errorf("unexpected value at the rank of p%v:\n- want: %d\n-  got: %d", p, want, got)
	}
}

// equivalent reports whether a and b are equal within the histogram's
// resolution of 3 significant digits.
func equivalent(a, b int64) bool {
	d := math.Abs(float64(a - b))
	return d <= math.Max(1, 0.001*math.Max(math.Abs(float64(a)), math.Abs(float64(b))))
}

func TestPercentNotQuantile(t *testing.T) {
	h := seq(t, 1, 1000)

	checkPercentile(t, h, 99.9, 999, true)
	checkPercentile(t, h, 50, 500, true)

	// 0.999 is p0.999, not p99.9: rank round(0.00999*1000) = 10, which is
	// next to the minimum.
	got, ok := h.Percentile(0.999)
	if !ok || got != 10 {
		t.Fatalf("unexpected Percentile(0.999):\n- want: 10, true\n-  got: %d, %v", got, ok)
	}
	if p999, _ := h.Percentile(99.9); got == p999 {
		t.Fatalf("Percentile(0.999) = Percentile(99.9) = %d; percent and quantile are confused", got)
	}
}

func TestRankConvention(t *testing.T) {
	// hdrhistogram-go picks rank round(p/100*N), halves up, at least 1; Java
	// and C pick ceil(p/100*N). Values below 2048 have exact buckets.
	tests := []struct {
		name   string
		lo, hi int64
		p      float64
		want   int64
		ok     bool
		java   int64 // what the ceiling rank would give, for the record
	}{
		{name: "p0 is exact min", lo: 1, hi: 10, p: 0, want: 1, ok: true, java: 1},
		{name: "p10 rank 1", lo: 1, hi: 10, p: 10, want: 1, ok: true, java: 1},
		{name: "p11 rounds down", lo: 1, hi: 10, p: 11, want: 1, ok: true, java: 2},
		{name: "p21 rounds down", lo: 1, hi: 10, p: 21, want: 2, ok: true, java: 3},
		{name: "p25 half rounds up", lo: 1, hi: 10, p: 25, want: 3, ok: true, java: 3},
		{name: "p50 of 1..10", lo: 1, hi: 10, p: 50, want: 5, ok: true, java: 5},
		{name: "p89 rounds down", lo: 1, hi: 10, p: 89, want: 9, ok: true, java: 9},
		{name: "p90 last backed", lo: 1, hi: 10, p: 90, want: 9, ok: true, java: 9},
		{name: "p91 not backed", lo: 1, hi: 10, p: 91, want: 0, ok: false},
		{name: "p50 of 1..2", lo: 1, hi: 2, p: 50, want: 1, ok: true, java: 1},
		{name: "p62.5 of 1..4", lo: 1, hi: 4, p: 62.5, want: 3, ok: true, java: 3},
		{name: "p60 of 101..104", lo: 101, hi: 104, p: 60, want: 102, ok: true, java: 103},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPercentile(t, seq(t, tt.lo, tt.hi), tt.p, tt.want, tt.ok)
		})
	}
}

func TestBacking(t *testing.T) {
	tests := []struct {
		name string
		n    int64
		p    float64
		ok   bool
	}{
		{name: "empty p0", n: 0, p: 0, ok: false},
		{name: "one sample p0", n: 1, p: 0, ok: true},
		// the 95 % interval must stay inside the data: q^n <= 2.5 %
		{name: "five samples p50", n: 5, p: 50, ok: false},
		{name: "six samples p50", n: 6, p: 50, ok: true},
		{name: "367 samples p99", n: 367, p: 99, ok: false},
		{name: "368 samples p99", n: 368, p: 99, ok: true},
		{name: "3687 samples p99.9", n: 3687, p: 99.9, ok: false},
		{name: "3688 samples p99.9", n: 3688, p: 99.9, ok: true},
		{name: "36886 samples p99.99", n: 36886, p: 99.99, ok: false},
		{name: "36887 samples p99.99", n: 36887, p: 99.99, ok: true},
		{name: "p100 is never backed", n: 100000, p: 100, ok: false},
		{name: "negative percent", n: 100, p: -1, ok: false},
		{name: "percent above 100", n: 100, p: 101, ok: false},
		{name: "NaN", n: 100, p: math.NaN(), ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hist.New()
			h.RecordN(1000, tt.n)
			_, ok := h.Percentile(tt.p)
			if ok != tt.ok {
				t.Fatalf("unexpected ok for p%v of %d samples:\n- want: %v\n-  got: %v", tt.p, tt.n, tt.ok, ok)
			}
		})
	}
}

func TestPercentileClampedToExactMax(t *testing.T) {
	// 100003 ns shares a 64 ns-wide bucket; the bucket's highest value is
	// 100031, which was never recorded and must not be reported.
	h := hist.New()
	h.RecordN(100003, 10)
	checkPercentile(t, h, 50, 100003, true)
	checkPercentile(t, h, 0, 100003, true)
}

func TestRange(t *testing.T) {
	tests := []struct {
		name            string
		record          func(h *hist.Histogram)
		count, min, max int64
		p50             int64
	}{
		{
			name:   "zero",
			record: func(h *hist.Histogram) { h.Record(0); h.Record(0) },
			count:  2, min: 0, max: 0, p50: 0,
		},
		{
			name:   "negative recorded as zero",
			record: func(h *hist.Histogram) { h.Record(-5); h.Record(7) },
			count:  2, min: 0, max: 7, p50: 0,
		},
		{
			name:   "highest trackable",
			record: func(h *hist.Histogram) { h.RecordN(hist.HighestTrackable, 2) },
			count:  2, min: hist.HighestTrackable, max: hist.HighestTrackable, p50: hist.HighestTrackable,
		},
		{
			name:   "true max above range",
			record: func(h *hist.Histogram) { h.Record(10); h.Record(int64(2 * time.Hour)) },
			count:  2, min: 10, max: int64(2 * time.Hour), p50: 10,
		},
		{
			name:   "max int64",
			record: func(h *hist.Histogram) { h.Record(math.MaxInt64); h.Record(1) },
			count:  2, min: 1, max: math.MaxInt64, p50: 1,
		},
		{
			name:   "slice saturates above max int64",
			record: func(h *hist.Histogram) { h.RecordSlice([]uint64{math.MaxUint64, 3}, 0) },
			count:  2, min: 3, max: math.MaxInt64, p50: 3,
		},
		{
			name:   "RecordN with n <= 0 records nothing",
			record: func(h *hist.Histogram) { h.RecordN(5, 0); h.RecordN(5, -3) },
			count:  0, min: 0, max: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hist.New()
			tt.record(h)
			if h.Count() != tt.count || h.Min() != tt.min || h.Max() != tt.max {
				t.Fatalf("unexpected count, min, max:\n- want: %d, %d, %d\n-  got: %d, %d, %d",
					tt.count, tt.min, tt.max, h.Count(), h.Min(), h.Max())
			}
			if tt.count >= 2 {
				checkPercentile(t, h, 50, tt.p50, true)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a := latencies(t, 5000, 1)
	b := latencies(t, 3000, 2)
	b = append(b, int64(3*time.Hour), 0)
	tests := []struct {
		name string
		a, b []int64
	}{
		{name: "both", a: a, b: b},
		{name: "disjoint ranges", a: []int64{1, 2, 3}, b: []int64{1e6, 2e6}},
		{name: "into empty", a: nil, b: b},
		{name: "from empty", a: a, b: nil},
		{name: "both empty", a: nil, b: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fromValues(t, tt.a...)
			o := fromValues(t, tt.b...)
			oBefore := o.Summary()
			h.Merge(o)
			want := fromValues(t, append(append([]int64(nil), tt.a...), tt.b...)...).Summary()
			if got := h.Summary(); got != want {
				t.Fatalf("unexpected merged summary:\n- want: %+v\n-  got: %+v", want, got)
			}
			if got := o.Summary(); got != oBefore {
				t.Fatalf("Merge modified its argument:\n- want: %+v\n-  got: %+v", oBefore, got)
			}
		})
	}
}

func TestMergeSelf(t *testing.T) {
	vals := latencies(t, 1000, 3)
	h := fromValues(t, vals...)
	h.Merge(h)
	want := fromValues(t, append(append([]int64(nil), vals...), vals...)...).Summary()
	if got := h.Summary(); got != want {
		t.Fatalf("unexpected summary after self merge:\n- want: %+v\n-  got: %+v", want, got)
	}
}

func TestMergeForeignGeometry(t *testing.T) {
	// A histogram from another tool, with another range and precision.
	f := hdrhistogram.New(1000, int64(10*time.Hour), 2)
	for _, v := range []int64{1500, 2500, 1e6, int64(5 * time.Hour)} {
		if err := f.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := f.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	o, err := hist.Decode(string(enc))
	if err != nil {
		t.Fatal(err)
	}
	h := fromValues(t, 10, 20)
	h.Merge(o)
	if h.Count() != 6 {
		t.Fatalf("unexpected count after merge:\n- want: 6\n-  got: %d", h.Count())
	}
	// The foreign histogram keeps 2 digits: its max comes back rounded up by
	// less than 1 %.
	if maxNS := int64(5 * time.Hour); h.Min() != 10 || h.Max() < maxNS || float64(h.Max()) > 1.01*float64(maxNS) {
		t.Fatalf("unexpected min, max after merge: %d, %d", h.Min(), h.Max())
	}
}

func TestReset(t *testing.T) {
	h := fromValues(t, latencies(t, 1000, 4)...)
	h.Reset()
	if got, want := h.Summary(), (hist.Summary{}); got != want {
		t.Fatalf("unexpected summary after Reset:\n- want: %+v\n-  got: %+v", want, got)
	}
	h.Record(42)
	if h.Min() != 42 || h.Max() != 42 || h.Count() != 1 {
		t.Fatalf("unexpected min, max, count after Reset and Record: %d, %d, %d", h.Min(), h.Max(), h.Count())
	}
}

func TestSummaryJSON(t *testing.T) {
	h := seq(t, 1, 10)
	s := h.Summary()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"count":10,"min_ns":1,"max_ns":10,"mean_ns":5.5,"stddev_ns":2.8722813232690143,` +
		`"p50_ns":5,"p90_ns":null,"p99_ns":null,"p99_9_ns":null,"p99_99_ns":null}`
	if string(b) != want {
		t.Fatalf("unexpected JSON:\n- want: %s\n-  got: %s", want, b)
	}
	var back hist.Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != s {
		t.Fatalf("unexpected summary after JSON round trip:\n- want: %+v\n-  got: %+v", s, back)
	}
}

func TestValueUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    hist.Value
		wantErr bool
	}{
		{name: "null", in: `null`, want: hist.Value{}},
		{name: "integer", in: `46210`, want: hist.Value{NS: 46210, OK: true}},
		{name: "float rounds", in: `46210.6`, want: hist.Value{NS: 46211, OK: true}},
		{name: "string", in: `"46210"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := hist.Value{NS: 7, OK: true}
			err := json.Unmarshal([]byte(tt.in), &v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("unexpected error: %v", err)
			}
			if !tt.wantErr && v != tt.want {
				t.Fatalf("unexpected value:\n- want: %+v\n-  got: %+v", tt.want, v)
			}
		})
	}
}

func TestValueFormat(t *testing.T) {
	tests := []struct {
		name    string
		v       hist.Value
		unitDiv float64
		prec    int
		want    string
	}{
		{name: "µs", v: hist.Value{NS: 46210, OK: true}, unitDiv: 1000, prec: 2, want: "46.21"},
		{name: "ns", v: hist.Value{NS: 46210, OK: true}, unitDiv: 1, prec: 0, want: "46210"},
		{name: "ms rounds", v: hist.Value{NS: 1234567, OK: true}, unitDiv: 1e6, prec: 1, want: "1.2"},
		{name: "not backed", v: hist.Value{NS: 46210}, unitDiv: 1000, prec: 2, want: "n/a"},
		{name: "zero value", v: hist.Value{}, unitDiv: 1, prec: 0, want: "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.Format(tt.unitDiv, tt.prec); got != tt.want {
				t.Fatalf("unexpected Format:\n- want: %q\n-  got: %q", tt.want, got)
			}
		})
	}
}

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		name string
		vals []int64
	}{
		{name: "empty", vals: nil},
		{name: "exact buckets", vals: []int64{0, 1, 5, 9, 1000, 2047}},
		{name: "latencies", vals: latencies(t, 100000, 5)},
		{name: "above range", vals: []int64{100, 200, int64(2 * time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fromValues(t, tt.vals...)
			s, err := h.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s, "HISTF") {
				t.Fatalf("unexpected encoding prefix: %.10q", s)
			}
			d, err := hist.Decode(s)
			if err != nil {
				t.Fatal(err)
			}
			if d.Count() != h.Count() {
				t.Fatalf("unexpected count:\n- want: %d\n-  got: %d", h.Count(), d.Count())
			}
			if !equivalent(d.Min(), h.Min()) || d.Min() > h.Min() {
				t.Errorf("unexpected min:\n- want: %d (bucket-rounded down)\n-  got: %d", h.Min(), d.Min())
			}
			if h.Max() <= hist.HighestTrackable && (!equivalent(d.Max(), h.Max()) || d.Max() < h.Max()) {
				t.Errorf("unexpected max:\n- want: %d (bucket-rounded up)\n-  got: %d", h.Max(), d.Max())
			}
			for _, p := range []float64{0, 10, 50, 90, 99, 99.9, 99.99} {
				want, wantOK := h.Percentile(p)
				got, ok := d.Percentile(p)
				if ok != wantOK || !equivalent(got, want) {
					t.Errorf("unexpected p%v after round trip:\n- want: %d, %v\n-  got: %d, %v", p, want, wantOK, got, ok)
				}
			}
		})
	}
}

func TestDecodeError(t *testing.T) {
	for _, s := range []string{"", "HISTFAAA", "not base64!"} {
		if _, err := hist.Decode(s); err == nil {
			t.Errorf("Decode(%q) succeeded, want an error", s)
		}
	}
}

func TestBoundedMemory(t *testing.T) {
	h := hist.New()
	before := h.ByteSize()
	r := rand.New(rand.NewPCG(6, 0))
	for range 1_000_000 {
		h.Record(r.Int64N(2 * hist.HighestTrackable))
	}
	if after := h.ByteSize(); after != before {
		t.Fatalf("unexpected ByteSize after 10^6 recordings:\n- want: %d\n-  got: %d", before, after)
	}
	v := int64(1)
	allocs := testing.AllocsPerRun(1000, func() {
		h.Record(v)
		h.RecordN(v*3, 2)
		v = v*7 + 1
	})
	if allocs != 0 {
		t.Fatalf("unexpected allocations per Record: want 0, got %v", allocs)
	}
}

func TestRecordSlice(t *testing.T) {
	raw := []uint64{0, 1, 15, 16, 17, 1600, 1 << 20, 1<<40 + 5}
	tests := []struct {
		name  string
		shift uint
	}{
		{name: "no shift", shift: 0},
		{name: "shift 4", shift: 4},
		{name: "shift 10", shift: 10},
		{name: "shift 64 gives zeros", shift: 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hist.New()
			got.RecordSlice(raw, tt.shift)
			want := hist.New()
			for _, v := range raw {
				want.Record(int64(v >> tt.shift))
			}
			if g, w := got.Summary(), want.Summary(); g != w {
				t.Fatalf("unexpected summary:\n- want: %+v\n-  got: %+v", w, g)
			}
		})
	}
}

func TestRecordSliceAllocs(t *testing.T) {
	h := hist.New()
	buf := make([]uint64, 4096)
	for i := range buf {
		buf[i] = uint64(i) * 977 << 3
	}
	allocs := testing.AllocsPerRun(100, func() { h.RecordSlice(buf, 3) })
	if allocs != 0 {
		t.Fatalf("unexpected allocations per RecordSlice: want 0, got %v", allocs)
	}
}

func BenchmarkRecord(b *testing.B) {
	h := hist.New()
	vals := latencies(b, 4096, 7)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.Record(vals[i&4095])
		i++
	}
}

func BenchmarkRecordSlice(b *testing.B) {
	h := hist.New()
	vals := latencies(b, 4096, 8)
	buf := make([]uint64, len(vals))
	for i, v := range vals {
		buf[i] = uint64(v) << 2
	}
	b.ReportAllocs()
	for b.Loop() {
		h.RecordSlice(buf, 2)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(buf)), "ns/value")
}

func BenchmarkSummary(b *testing.B) {
	h := fromValues(b, latencies(b, 1_000_000, 9)...)
	b.ReportAllocs()
	for b.Loop() {
		h.Summary()
	}
}

func BenchmarkMerge(b *testing.B) {
	h := hist.New()
	o := fromValues(b, latencies(b, 100_000, 10)...)
	b.ReportAllocs()
	for b.Loop() {
		h.Merge(o)
	}
}
