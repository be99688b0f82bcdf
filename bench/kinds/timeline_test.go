package kinds

import (
	"net"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/timeline"
)

// TestTimelineMarksOverControl: the client's marks reach a server reading
// the test's messages (awaitEndMarks) between heartbeats, all before the
// end, and the server's series lines up with the client's intervals.
func TestTimelineMarksOverControl(t *testing.T) {
	a, b := net.Pipe()
	cc, sc := proto.NewConn(a, 5*time.Second), proto.NewConn(b, 5*time.Second)
	defer cc.Close()
	defer sc.Close()
	srvRead, _ := timeline.Replay(map[string]uint64{"rcvd_seq_err": 0}, map[string]uint64{"rcvd_seq_err": 2}, map[string]uint64{"rcvd_seq_err": 2})
	marks := timeline.NewServer("rxe9", 1, srvRead)
	var end proto.Ready
	msgs := awaitEndMarks(sc, &end, marks)

	cliRead, _ := timeline.Replay(map[string]uint64{"sent_pkts": 0}, map[string]uint64{"sent_pkts": 5}, map[string]uint64{"sent_pkts": 9})
	tl := timeline.NewClient("rxe0", 1, cc, cliRead)
	stopBeat := Heartbeat(cc)
	tl.Begin(time.Now(), "t")
	tl.Mark()
	tl.Mark()
	stopBeat()
	tl.Stop()
	if err := cc.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: 7}); err != nil {
		t.Fatal(err)
	}
	if err := <-msgs; err != nil {
		t.Fatal(err)
	}
	if end.Total != 7 {
		t.Errorf("end total %d, want 7", end.Total)
	}
	ivs := make([]result.Interval, 2)
	tl.Attach(ivs, marks.Series())
	for i, want := range []int64{2, 0} {
		c := ivs[i].Counters
		if c == nil || c.Server == nil || c.Client == nil {
			t.Fatalf("interval %d: %+v, want both sides", i, c)
		}
		if c.Server.Device != "rxe9" || c.Server.Deltas["rcvd_seq_err"] != want {
			t.Errorf("interval %d: server %+v, want rxe9 rcvd_seq_err %d", i, c.Server, want)
		}
	}
	if ivs[0].Counters.Client.Deltas["sent_pkts"] != 5 || ivs[1].Counters.Client.Deltas["sent_pkts"] != 4 {
		t.Errorf("client deltas %v, %v; want 5, 4", ivs[0].Counters.Client.Deltas, ivs[1].Counters.Client.Deltas)
	}
}

// TestReadBidirClientMarks: a bidirectional server takes marks while the
// client measures.
func TestReadBidirClientMarks(t *testing.T) {
	a, b := net.Pipe()
	cc, sc := proto.NewConn(a, 5*time.Second), proto.NewConn(b, 5*time.Second)
	defer cc.Close()
	defer sc.Close()
	read, calls := timeline.Replay(map[string]uint64{"x": 1}, map[string]uint64{"x": 3})
	marks := timeline.NewServer("rxe0", 1, read)
	warmup, measure := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	var end proto.Ready
	go func() { done <- readBidirClient(sc, warmup, measure, &end, marks) }()
	for _, r := range []proto.Ready{{Phase: proto.PhaseWarmup}, {Phase: proto.PhaseMeasure}, {Phase: proto.PhaseMark, Mark: 0},
		{Phase: proto.PhaseAlive}, {Phase: proto.PhaseMark, Mark: 1}, {Phase: proto.PhaseEnd, Total: 3}} {
		if err := cc.Send(proto.MsgReady, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if calls() != 2 || len(marks.Series()) != 1 || marks.Series()[0].Deltas["x"] != 2 {
		t.Errorf("%d reads, series %+v; want 2 reads and x moved by 2", calls(), marks.Series())
	}
}
