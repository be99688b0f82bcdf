package hist_test

import (
	"math"
	"testing"

	"github.com/rdmabench/rdmabench/hist"
)

// iterHist returns a Histogram holding 1..n µs (in ns) once each, plus tail.
func iterHist(n int64, tail ...int64) *hist.Histogram {
	h := hist.New()
	for v := int64(1); v <= n; v++ {
		h.Record(v * 1000)
	}
	for _, v := range tail {
		h.Record(v)
	}
	return h
}

func TestDistribution(t *testing.T) {
	h := iterHist(10000, 5_000_000)
	pts := h.Distribution()
	if len(pts) < 20 {
		t.Fatalf("Distribution: %d points, want the .hgrm's ~5 per halving", len(pts))
	}
	if p := pts[0]; p.Percentile != 0 || p.NS != h.Min() {
		t.Errorf("first point %+v, want percentile 0 at min %d", p, h.Min())
	}
	if p := pts[len(pts)-1]; p.Percentile != 100 || p.NS != h.Max() || p.Count != h.Count() {
		t.Errorf("last point %+v, want percentile 100 at max %d, count %d", p, h.Max(), h.Count())
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if b.Percentile < a.Percentile || b.NS < a.NS || b.Count < a.Count {
			t.Fatalf("points %d and %d decrease: %+v, %+v", i-1, i, a, b)
		}
	}
	// The points agree with Percentile within the resolution and one rank.
	checked := 0
	for _, p := range pts {
		v, ok := h.Percentile(p.Percentile)
		if !ok || p.Percentile == 0 {
			continue
		}
		checked++
		if d := math.Abs(float64(p.NS-v)) / float64(v); d > 0.003 {
			t.Errorf("point p%v = %d ns, Percentile = %d ns", p.Percentile, p.NS, v)
		}
	}
	if checked < 20 {
		t.Errorf("only %d points checked", checked)
	}
}

func TestDistributionSmall(t *testing.T) {
	if pts := hist.New().Distribution(); pts != nil {
		t.Errorf("empty histogram: %v, want nil", pts)
	}
	h := hist.New()
	h.Record(1234)
	pts := h.Distribution()
	if len(pts) < 2 || pts[0].NS != 1234 || pts[len(pts)-1].NS != 1234 || pts[len(pts)-1].Percentile != 100 {
		t.Errorf("one value: %+v", pts)
	}
}

func TestDistributionDecoded(t *testing.T) {
	h := iterHist(2000)
	s, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := hist.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	a, b := h.Distribution(), d.Distribution()
	if len(a) != len(b) {
		t.Fatalf("decoded: %d points, original %d", len(b), len(a))
	}
	for i := range a {
		if a[i].Percentile != b[i].Percentile || a[i].Count != b[i].Count {
			t.Fatalf("point %d: original %+v, decoded %+v", i, a[i], b[i])
		}
	}
}

func TestBuckets(t *testing.T) {
	h := iterHist(3000, 3_600_000_000_000*2) // one value above HighestTrackable
	bs := h.Buckets()
	var n int64
	for i, b := range bs {
		if b.Count <= 0 || b.Low > b.High {
			t.Fatalf("bucket %d: %+v", i, b)
		}
		if i > 0 && b.Low <= bs[i-1].High {
			t.Fatalf("buckets %d and %d overlap: %+v %+v", i-1, i, bs[i-1], b)
		}
		if b.Low < h.Min() || b.High > h.Max() {
			t.Fatalf("bucket %d %+v outside [%d, %d]", i, b, h.Min(), h.Max())
		}
		n += b.Count
	}
	if n != h.Count() {
		t.Errorf("bucket counts add up to %d, Count() = %d", n, h.Count())
	}
	if bs[0].Low != 1000 {
		t.Errorf("first bucket %+v, want it to start at the min 1000", bs[0])
	}
	if hist.New().Buckets() != nil {
		t.Error("empty histogram has buckets")
	}
}
