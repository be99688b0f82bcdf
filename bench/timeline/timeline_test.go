package timeline

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// TestTimelineDeltas: each interval gets the client's deltas between its
// two marks and the server's element; unreadable snapshots and missing
// server elements leave that side out, and a counter that went down is a
// reset, not a delta.
func TestTimelineDeltas(t *testing.T) {
	read, calls := Replay(
		map[string]uint64{"sent_pkts": 10, "out_of_seq_request": 1},
		map[string]uint64{"sent_pkts": 110, "out_of_seq_request": 1},
		map[string]uint64{"sent_pkts": 150, "out_of_seq_request": 4},
		nil, // unreadable at mark 3
		map[string]uint64{"sent_pkts": 20, "out_of_seq_request": 9}, // sent_pkts went down
	)
	tl := NewClient("rxe0", 1, nil, read)
	tl.Begin(time.Unix(100, 0), "send-bw-64B")
	tl.Begin(time.Unix(200, 0), "other") // only the first counts
	for range 4 {
		tl.Mark()
	}
	ivs := make([]result.Interval, 5)
	srv := &proto.PortCounters{Device: "rxe1", Port: 2, Deltas: map[string]int64{"duplicate_request": 3, "neg": -1}}
	tl.Attach(ivs, []*proto.PortCounters{srv, nil})
	if calls() != 5 {
		t.Fatalf("%d reads, want 5 (one per mark)", calls())
	}
	pc := func(d map[string]int64, reset ...string) *result.PortCounters {
		return &result.PortCounters{Device: "rxe0", Port: 1, Deltas: d, Reset: reset}
	}
	want := []*result.CounterDeltas{
		{Client: pc(map[string]int64{"sent_pkts": 100}),
			Server: &result.PortCounters{Device: "rxe1", Port: 2, Deltas: map[string]int64{"duplicate_request": 3}}},
		{Client: pc(map[string]int64{"sent_pkts": 40, "out_of_seq_request": 3})},
		nil, // mark 3 unreadable: neither interval 2 nor 3 has the client's
		nil,
		nil, // no mark 5
	}
	for i := range ivs {
		if !reflect.DeepEqual(ivs[i].Counters, want[i]) {
			t.Errorf("interval %d: counters %+v, want %+v", i, ivs[i].Counters, want[i])
		}
	}
	if !tl.wallStart.Equal(time.Unix(100, 0)) || tl.tag != "send-bw-64B" {
		t.Errorf("begin: %v %q, want the first call's", tl.wallStart, tl.tag)
	}
	// a reset counter, then a nil timeline: no-ops
	read, _ = Replay(map[string]uint64{"a": 5}, map[string]uint64{"a": 2, "b": 1})
	tl = NewClient("rxe0", 1, nil, read)
	tl.Begin(time.Now(), "x")
	tl.Mark()
	ivs = make([]result.Interval, 1)
	tl.Attach(ivs, nil)
	if c := ivs[0].Counters; c == nil || !reflect.DeepEqual(c.Client, pc(map[string]int64{}, "a")) {
		t.Errorf("reset: %+v", c)
	}
	var none *Client
	none.Begin(time.Now(), "x")
	none.Mark()
	none.Stop()
	none.Attach(ivs, nil)
	if err := none.WriteHLog(nil, ivs); err != nil {
		t.Error(err)
	}
}

// TestMarkSeries: the server keeps the deltas between consecutive marks,
// ignores marks out of order, before mark 0 or past the limit, and gives
// nil for a test without marks.
func TestMarkSeries(t *testing.T) {
	read, calls := Replay(
		map[string]uint64{"x": 1, "y": 0},
		map[string]uint64{"x": 4, "y": 0},
		map[string]uint64{"x": 4, "y": 2},
	)
	m := NewServer("rxe0", 1, read)
	if m.Series() != nil {
		t.Fatal("series before any mark")
	}
	m.Mark(1) // before 0: ignored
	m.Mark(0)
	m.Mark(0) // again: ignored
	m.Mark(1)
	m.Mark(5) // out of order: ignored
	m.Mark(2)
	m.Mark(proto.MaxIntervalMarks)
	if calls() != 3 {
		t.Errorf("%d reads, want 3", calls())
	}
	want := []*proto.PortCounters{
		{Device: "rxe0", Port: 1, Deltas: map[string]int64{"x": 3}},
		{Device: "rxe0", Port: 1, Deltas: map[string]int64{"y": 2}},
	}
	if got := m.Series(); !reflect.DeepEqual(got, want) {
		t.Errorf("series %+v, want %+v", got, want)
	}
	var none *Server
	none.Mark(0)
	if none.Series() != nil {
		t.Error("nil series")
	}
	// the limit: marks past MaxIntervalMarks are not read
	n := 0
	m = NewServer("d", 1, func() map[string]uint64 { n++; return map[string]uint64{"x": uint64(n)} })
	for k := range proto.MaxIntervalMarks + 10 {
		m.Mark(k)
	}
	if n != proto.MaxIntervalMarks || len(m.Series()) != proto.MaxIntervalMarks-1 {
		t.Errorf("limit: %d reads, %d intervals; want %d and %d", n, len(m.Series()), proto.MaxIntervalMarks, proto.MaxIntervalMarks-1)
	}
}

// TestFit: a series too large for one message is dropped with an
// error naming the sizes; one that fits stays.
func TestFit(t *testing.T) {
	small := proto.ServerResult{IntervalCounters: []*proto.PortCounters{{Device: "d", Port: 1, Deltas: map[string]int64{"x": 1}}}}
	if err := Fit(&small); err != nil || len(small.IntervalCounters) != 1 {
		t.Errorf("small: %v, %d intervals", err, len(small.IntervalCounters))
	}
	big := proto.ServerResult{}
	deltas := map[string]int64{}
	for i := range 200 {
		deltas[strings.Repeat("c", 40)+string(rune('a'+i%26))+strings.Repeat("x", i/26)] = 1 << 40
	}
	for range proto.MaxIntervalMarks {
		big.IntervalCounters = append(big.IntervalCounters, &proto.PortCounters{Device: "d", Port: 1, Deltas: deltas})
	}
	err := Fit(&big)
	if err == nil || big.IntervalCounters != nil || !strings.Contains(err.Error(), "over the protocol's") {
		t.Errorf("big: %v, %d intervals left", err, len(big.IntervalCounters))
	}
}

// TestTimelineHLog: one note per interval with counters, after the
// interval lines, joinable by tag and start, which hdrhistogram-go's
// reader skips: the intervals and their tags read back unchanged.
func TestTimelineHLog(t *testing.T) {
	var buf bytes.Buffer
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lw, err := hist.NewLogWriter(&buf, start)
	if err != nil {
		t.Fatal(err)
	}
	h := hist.New()
	h.RecordSlice([]uint64{1000, 2000}, 0)
	h.SetTag("send-lat-2B")
	if err := lw.WriteInterval(h, start.Add(250*time.Millisecond), start.Add(1250*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	tl := &Client{wallStart: start.Add(250 * time.Millisecond), tag: "send-lat-2B"}
	ivs := []result.Interval{
		{StartNS: 0, EndNS: 1e9, Counters: &result.CounterDeltas{
			Client: &result.PortCounters{Deltas: map[string]int64{"sent_pkts": 9, "out_of_seq_request": 2}, Reset: []string{"z"}},
			Server: &result.PortCounters{Deltas: map[string]int64{"duplicate_request": 1}}}},
		{StartNS: 1e9, EndNS: 2e9}, // no counters: no note
	}
	if err := tl.WriteHLog(lw, ivs); err != nil {
		t.Fatal(err)
	}
	want := "#[Counters Tag=send-lat-2B,0.250000,1.000000,client.out_of_seq_request=2;client.sent_pkts=9;client.z=reset;server.duplicate_request=1]\n"
	if !strings.HasSuffix(buf.String(), want) {
		t.Errorf("hlog ends\n%q\nwant\n%q", buf.String()[max(0, buf.Len()-len(want)-20):], want)
	}
	if !strings.Contains(buf.String(), "Tag=send-lat-2B,0.250000,1.000000,") {
		t.Errorf("the interval line does not start as the note: %s", buf.String())
	}
	r := hdrhistogram.NewHistogramLogReader(&buf)
	n := 0
	for {
		got, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			break
		}
		n++
		if got.Tag() != "send-lat-2B" || got.TotalCount() != 2 {
			t.Errorf("read back tag %q count %d", got.Tag(), got.TotalCount())
		}
	}
	if n != 1 {
		t.Errorf("read back %d intervals, want 1", n)
	}
	if err := lw.WriteIntervalNote("Counters", "a,b", start, start, ""); err == nil {
		t.Error("a tag with a comma was written")
	}
}
