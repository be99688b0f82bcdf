package bench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// Counter timelines: in a test with reporting intervals, each interval
// carries the port counters that moved during it, on both sides
// (result.Interval.Counters).
//
// The boundaries are the intervals': where the client's loop closes an
// interval (intervals.flush, in Go between two calls of the C loop, or in
// the drainer goroutine), it notes a mark, which costs a lock and a
// channel send. Mark 0 is the start of the measured span, mark N the end
// of interval N. A goroutine of the client's (counterTimeline.run) takes
// the marks: it reads the client's sysfs counters and, when the server
// said it can (proto.HelloAck.IntervalCounters), sends the mark to the
// server (Ready{PhaseMark}) on the control connection, beside the
// heartbeats. The server reads its own counters when a mark arrives (in
// the goroutine that reads the client's messages during the test, never a
// responder thread) and returns the deltas between marks with its result
// (proto.ServerResult.IntervalCounters). Neither side's C loop does any
// of it. Every mark is sent before the client's end of the test, so none
// is left for the server to read afterwards.
//
// A side's read of a boundary lags the interval's end by the time to wake
// the goroutine, and, for the server, the mark's trip over the control
// connection (a TCP retransmission on a lossy wire delays it); the kernel
// also caches hw_counters for their lifespan (10 ms by default). With
// intervals of a second these are small; a counter's move near a boundary
// can fall into the neighbouring interval.

// counterTimeline is the client's side of one test's counter timeline.
type counterTimeline struct {
	device string
	port   int
	c      *proto.Conn // marks go to the server; nil: the server takes none
	read   func() map[string]uint64

	mu        sync.Mutex
	pending   int       // marks noted and not yet taken
	begun     bool      // mark 0 is noted
	tag       string    // the intervals' .hlog tag
	wallStart time.Time // wall-clock time of mark 0
	snaps     []map[string]uint64
	sendErr   error // the first failed mark send: no more are sent

	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// startTimeline starts the counter timeline of a test on dev (nil for a
// side without RDMA device: no timeline). c, when not nil, is the control
// connection of a server that takes marks.
func startTimeline(dev *Device, c *proto.Conn) *counterTimeline {
	if dev == nil || dev.Ctx == nil {
		return nil
	}
	name, port := dev.Ctx.Name(), dev.Port.Port
	return newTimeline(name, port, c, func() map[string]uint64 { return readPortCounters(name, port) })
}

func newTimeline(device string, port int, c *proto.Conn, read func() map[string]uint64) *counterTimeline {
	tl := &counterTimeline{device: device, port: port, c: c, read: read,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go tl.run()
	return tl
}

// begin notes mark 0, the start of the measured span at wall-clock time
// wall, of the intervals tagged tag in the .hlog; only the first call
// counts. Safe on a nil timeline, as every
// method.
func (tl *counterTimeline) begin(wall time.Time, tag string) {
	if tl == nil {
		return
	}
	tl.mu.Lock()
	again := tl.begun
	if !again {
		tl.begun, tl.wallStart, tl.tag = true, wall, tag
	}
	tl.mu.Unlock()
	if !again {
		tl.mark()
	}
}

// mark notes the next boundary: the end of the interval just closed. It
// does not wait for the counters to be read.
func (tl *counterTimeline) mark() {
	if tl == nil {
		return
	}
	tl.mu.Lock()
	tl.pending++
	tl.mu.Unlock()
	select {
	case tl.wake <- struct{}{}:
	default:
	}
}

// run takes the marks until stop: the client's counters, then the mark to
// the server.
func (tl *counterTimeline) run() {
	defer close(tl.done)
	for {
		select {
		case <-tl.wake:
			tl.take()
		case <-tl.quit:
			tl.take() // what was noted before the stop
			return
		}
	}
}

func (tl *counterTimeline) take() {
	for {
		tl.mu.Lock()
		if tl.pending == 0 {
			tl.mu.Unlock()
			return
		}
		tl.pending--
		k := len(tl.snaps)
		tl.mu.Unlock()
		snap := tl.read()
		tl.mu.Lock()
		tl.snaps = append(tl.snaps, snap)
		send := tl.c != nil && tl.sendErr == nil && k < proto.MaxIntervalMarks
		tl.mu.Unlock()
		if send {
			if err := tl.c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseMark, Mark: k}); err != nil {
				tl.mu.Lock()
				tl.sendErr = err
				tl.mu.Unlock()
			}
		}
	}
}

// stop takes the marks noted so far and ends the goroutine; it returns
// when every mark is sent. Idempotent.
func (tl *counterTimeline) stop() {
	if tl == nil {
		return
	}
	tl.stopOnce.Do(func() {
		close(tl.quit)
		<-tl.done
	})
}

// attach stops the timeline and fills each interval's Counters: the
// client's deltas between its reads of the interval's two marks, and the
// server's from server (proto.ServerResult.IntervalCounters, element i for
// interval i). An interval without either side's counters keeps nil.
func (tl *counterTimeline) attach(ivs []result.Interval, server []*proto.PortCounters) {
	if tl == nil {
		return
	}
	tl.stop()
	for i := range ivs {
		c := &result.CounterDeltas{}
		if i+1 < len(tl.snaps) && tl.snaps[i] != nil && tl.snaps[i+1] != nil {
			d, reset := counterDeltas(tl.snaps[i], tl.snaps[i+1])
			c.Client = &result.PortCounters{Device: tl.device, Port: tl.port, Deltas: d, Reset: reset}
		}
		if i < len(server) && server[i] != nil {
			c.Server = serverPortCounters(server[i])
		}
		if c.Client != nil || c.Server != nil {
			ivs[i].Counters = c
		}
	}
}

// writeHLog writes one note per interval that has counters to l after the
// test's interval lines (hist.LogWriter.WriteIntervalNote): the test's tag,
// the interval's start and length, and the counters that moved as
// SIDE.NAME=DELTA, ';'-separated (an empty list: nothing moved).
func (tl *counterTimeline) writeHLog(l *hist.LogWriter, ivs []result.Interval) error {
	if tl == nil || l == nil {
		return nil
	}
	for _, iv := range ivs {
		if iv.Counters == nil {
			continue
		}
		start := tl.wallStart.Add(time.Duration(iv.StartNS))
		end := tl.wallStart.Add(time.Duration(iv.EndNS))
		if err := l.WriteIntervalNote("Counters", tl.tag, start, end, counterNote(iv.Counters)); err != nil {
			return err
		}
	}
	return nil
}

// counterNote is an interval's counters as "client.NAME=N;server.NAME=N",
// sorted by side and name; a counter that went down is "SIDE.NAME=reset".
func counterNote(c *result.CounterDeltas) string {
	var parts []string
	for _, s := range []struct {
		side string
		p    *result.PortCounters
	}{{"client", c.Client}, {"server", c.Server}} {
		if s.p == nil {
			continue
		}
		names := make([]string, 0, len(s.p.Deltas))
		for n := range s.p.Deltas {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			parts = append(parts, s.side+"."+n+"="+strconv.FormatInt(s.p.Deltas[n], 10))
		}
		for _, n := range s.p.Reset {
			parts = append(parts, s.side+"."+n+"=reset")
		}
	}
	return strings.Join(parts, ";")
}

// serverPortCounters is a server's counters in the result's form, with
// only positive deltas, as the schema has them, whatever the peer sent.
func serverPortCounters(p *proto.PortCounters) *result.PortCounters {
	deltas := map[string]int64{}
	for name, v := range p.Deltas {
		if v > 0 && plainName(strings.TrimPrefix(name, result.HWCounterPrefix)) {
			deltas[name] = v
		}
	}
	return &result.PortCounters{Device: p.Device, Port: p.Port, Deltas: deltas, Reset: p.Reset}
}

// markSeries is the server's side of a test's counter timeline: its port
// counters at each of the client's marks, kept as the deltas between
// consecutive marks. At most proto.MaxIntervalMarks marks are kept; marks
// out of order are ignored.
type markSeries struct {
	device string
	port   int
	read   func() map[string]uint64

	started bool
	prev    map[string]uint64 // at the last mark kept (nil: unreadable)
	list    []*proto.PortCounters
}

// newMarkSeries returns the server's mark series of a test on dev (nil
// when dev is nil: the marks are ignored).
func newMarkSeries(dev *Device) *markSeries {
	if dev == nil || dev.Ctx == nil {
		return nil
	}
	name, port := dev.Ctx.Name(), dev.Port.Port
	return &markSeries{device: name, port: port, read: func() map[string]uint64 { return readPortCounters(name, port) }}
}

// mark takes mark k: the counters now, and the deltas since the previous
// mark. Not safe for concurrent use; safe on nil.
func (m *markSeries) mark(k int) {
	if m == nil || k >= proto.MaxIntervalMarks {
		return
	}
	switch {
	case k == 0 && !m.started:
		m.started, m.prev = true, m.read()
	case m.started && k == len(m.list)+1:
		cur := m.read()
		var p *proto.PortCounters
		if m.prev != nil && cur != nil {
			d, reset := counterDeltas(m.prev, cur)
			p = &proto.PortCounters{Device: m.device, Port: m.port, Deltas: d, Reset: reset}
		}
		m.list = append(m.list, p)
		m.prev = cur
	}
}

// series is what the server returns: nil when no interval has counters.
func (m *markSeries) series() []*proto.PortCounters {
	if m == nil || len(m.list) == 0 {
		return nil
	}
	return m.list
}

// fitResult drops res's interval counters when the result message would
// exceed the protocol's payload limit with them.
func fitResult(res *proto.ServerResult) error {
	if len(res.IntervalCounters) == 0 {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if len(b) > proto.MaxPayload {
		n := len(res.IntervalCounters)
		res.IntervalCounters = nil
		return fmt.Errorf("interval counters of %d intervals left out: the result would be %d bytes, over the protocol's %d", n, len(b), proto.MaxPayload)
	}
	return nil
}

// timelineWanted reports whether a test of s run with o has reporting
// intervals, and so a counter timeline (newIntervals' rule).
func timelineWanted(s Spec, o RunOptions) bool {
	return o.Interval > 0 || s.Duration > 0 || o.HLog != nil
}
