package hist_test

import (
	"bytes"

	"io"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/internal/golden"
)

// golden compares got with testdata/name (see internal/golden).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, got)
}

func TestWriteHGRM(t *testing.T) {
	h := fromValues(t, latencies(t, 10000, 11)...)
	var buf bytes.Buffer
	if err := h.WriteHGRM(&buf, 1000); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"\n#[Mean    = ",
		"\n#[Max     = ",
		"Total count    =        10000]\n",
		"\n#[Buckets = ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hgrm output lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(out, " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n") {
		t.Errorf("unexpected hgrm header: %.60q", out)
	}
	checkGolden(t, "latencies_us.hgrm", buf.Bytes())
}

func TestWriteHGRMBadRatio(t *testing.T) {
	for _, r := range []float64{0, -1} {
		if err := hist.New().WriteHGRM(io.Discard, r); err == nil {
			t.Errorf("WriteHGRM with unit ratio %v succeeded, want an error", r)
		}
	}
}

func TestLogRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 250_000_000, time.UTC)
	intervals := []struct {
		name       string
		start, end time.Duration // from the log start
		vals       []int64
	}{
		{name: "first", start: 0, end: time.Second, vals: latencies(t, 2000, 12)},
		{name: "empty", start: time.Second, end: 2 * time.Second},
		{name: "third", start: 2 * time.Second, end: 3500 * time.Millisecond, vals: latencies(t, 500, 13)},
	}

	var buf bytes.Buffer
	lw, err := hist.NewLogWriter(&buf, start)
	if err != nil {
		t.Fatal(err)
	}
	h := hist.New()
	var want []hist.Summary
	for _, iv := range intervals {
		for _, v := range iv.vals {
			h.Record(v)
		}
		want = append(want, h.Summary())
		if err := lw.WriteInterval(h, start.Add(iv.start), start.Add(iv.end)); err != nil {
			t.Fatal(err)
		}
		h.Reset()
	}
	checkGolden(t, "intervals.hlog", buf.Bytes())

	header := buf.String()
	for _, line := range []string{
		"#[Histogram log format version 1.3]\n",
		"#[StartTime: 1795953600.250 (seconds since epoch), 2026-11-29T12:00:00.25Z]\n",
		"#[BaseTime: 1795953600.250 (seconds since epoch)]\n",
		"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
		"\n0.000000,1.000000,",
	} {
		if !strings.Contains(header, line) {
			t.Errorf("hlog lacks %q:\n%s", line, header)
		}
	}

	r := hdrhistogram.NewHistogramLogReader(&buf)
	for i, iv := range intervals {
		got, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Fatalf("interval %q missing from the log", iv.name)
		}
		if n := got.TotalCount(); n != want[i].Count {
			t.Errorf("interval %q: unexpected count:\n- want: %d\n-  got: %d", iv.name, want[i].Count, n)
		}
		// The reader adds seconds as float64; allow 1 ms of rounding.
		wantStart, wantEnd := start.Add(iv.start).UnixMilli(), start.Add(iv.end).UnixMilli()
		if d := got.StartTimeMs() - wantStart; d < -1 || d > 1 {
			t.Errorf("interval %q: unexpected start:\n- want: %d ms\n-  got: %d ms", iv.name, wantStart, got.StartTimeMs())
		}
		if d := got.EndTimeMs() - wantEnd; d < -1 || d > 1 {
			t.Errorf("interval %q: unexpected end:\n- want: %d ms\n-  got: %d ms", iv.name, wantEnd, got.EndTimeMs())
		}
		enc, err := got.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		d, err := hist.Decode(string(enc))
		if err != nil {
			t.Fatal(err)
		}
		s := d.Summary()
		for _, pv := range []struct {
			name      string
			want, got hist.Value
		}{
			{"p50", want[i].P50, s.P50},
			{"p99", want[i].P99, s.P99},
			{"p99.9", want[i].P999, s.P999},
		} {
			if pv.got.OK != pv.want.OK || !equivalent(pv.got.NS, pv.want.NS) {
				t.Errorf("interval %q: unexpected %s:\n- want: %v\n-  got: %v", iv.name, pv.name, pv.want, pv.got)
			}
		}
	}
	if got, err := r.NextIntervalHistogram(); err != nil || got != nil {
		t.Fatalf("unexpected data after the last interval: %v, %v", got, err)
	}
}

func TestLogWriterBadInterval(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	lw, err := hist.NewLogWriter(io.Discard, start)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		start, end time.Time
	}{
		{name: "before log start", start: start.Add(-time.Second), end: start},
		{name: "end before start", start: start.Add(2 * time.Second), end: start.Add(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := lw.WriteInterval(hist.New(), tt.start, tt.end); err == nil {
				t.Fatal("WriteInterval succeeded, want an error")
			}
		})
	}
}
