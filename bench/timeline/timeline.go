// Package timeline is the counter timeline of a test with reporting
// intervals: each interval carries the port counters that moved during it,
// on both sides (result.Interval.Counters).
//
// The boundaries are the intervals': where the client's loop closes an
// interval (bench's intervals.flush, in Go between two calls of the C
// loop, or in the drainer goroutine), it calls Client.Mark, which costs a
// lock and a channel send. Mark 0 is the start of the measured span, mark
// N the end of interval N. The Client's goroutine takes the marks: it reads
// the client's counters and, when the server said it can
// (proto.HelloAck.IntervalCounters), sends the mark to the server
// (Ready{PhaseMark}) on the control connection, beside the heartbeats. The
// server reads its own counters when a mark arrives (Server.Mark, in the
// goroutine that reads the client's messages during the test, never a
// responder thread) and returns the deltas between marks with its result
// (proto.ServerResult.IntervalCounters). Neither side's C loop does any of
// it. Every mark is sent before the client's end of the test (Client.Stop),
// so none is left for the server to read afterwards.
//
// A side's read of a boundary lags the interval's end by the time to wake
// the goroutine, and, for the server, the mark's trip over the control
// connection (a TCP retransmission on a lossy wire delays it); the kernel
// also caches hw_counters for their lifespan (10 ms by default). With
// intervals of a second these are small; a counter's move near a boundary
// can fall into the neighbouring interval.
//
// Pure Go: the counters come from a Reader (bench reads sysfs).
package timeline

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// Reader reads one port's counters now, by name; nil when none can be read.
type Reader func() map[string]uint64

// Replay is a Reader over recorded snapshots, one per call, nil after the
// last (counters gone unreadable), and how many calls it has had: a
// stand-in for a port in tests.
func Replay(snaps ...map[string]uint64) (Reader, func() int) {
	var mu sync.Mutex
	n := 0
	return func() map[string]uint64 {
			mu.Lock()
			defer mu.Unlock()
			n++
			if n > len(snaps) {
				return nil
			}
			return snaps[n-1]
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return n
		}
}

// Deltas returns after − before of each counter in both snapshots that
// moved up, and, sorted, the counters that went down (a reset or a
// wrap-around: their true delta is unknown). A counter in only one
// snapshot is left out.
func Deltas(before, after map[string]uint64) (map[string]int64, []string) {
	deltas := map[string]int64{}
	var reset []string
	for name, a := range after {
		b, ok := before[name]
		switch {
		case !ok || a == b:
		case a < b:
			reset = append(reset, name)
		default:
			deltas[name] = int64(min(a-b, math.MaxInt64))
		}
	}
	sort.Strings(reset)
	return deltas, reset
}

// Client is the client's side of one test's counter timeline. Its methods
// are safe on a nil *Client (a test without timeline) and do nothing.
type Client struct {
	device string
	port   int
	c      Sender // marks go to the server; nil: the server takes none
	read   Reader

	mu        sync.Mutex
	pending   int       // marks noted and not yet taken
	begun     bool      // mark 0 is noted
	wallStart time.Time // wall-clock time of mark 0
	tag       string    // the intervals' .hlog tag
	snaps     []map[string]uint64
	sendErr   error // the first failed mark send: no more are sent

	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Sender sends the client's marks to the server: the test's control
// channel (a *proto.Conn, a bench/ctrl.Chan).
type Sender interface {
	Send(t proto.MsgType, v any) error
}

// NewClient starts the timeline of a test on device's port: read reads
// its counters; c, when not nil, is the control connection of a server
// that takes marks. Stop it (or Attach) when the test ends.
func NewClient(device string, port int, c Sender, read Reader) *Client {
	tl := &Client{device: device, port: port, c: c, read: read,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go tl.run()
	return tl
}

// Begin notes mark 0, the start of the measured span at wall-clock time
// wall, of the intervals tagged tag in the .hlog; only the first call
// counts.
func (tl *Client) Begin(wall time.Time, tag string) {
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
		tl.Mark()
	}
}

// Mark notes the next boundary: the end of the interval just closed. It
// does not wait for the counters to be read.
func (tl *Client) Mark() {
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

// run takes the marks until Stop: the client's counters, then the mark to
// the server.
func (tl *Client) run() {
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

func (tl *Client) take() {
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

// Stop takes the marks noted so far and ends the goroutine; it returns
// when every mark is sent. Idempotent.
func (tl *Client) Stop() {
	if tl == nil {
		return
	}
	tl.stopOnce.Do(func() {
		close(tl.quit)
		<-tl.done
	})
}

// Attach stops the timeline and fills each interval's Counters: the
// client's deltas between its reads of the interval's two marks, and the
// server's from server (proto.ServerResult.IntervalCounters, element i for
// interval i). An interval without either side's counters keeps nil.
func (tl *Client) Attach(ivs []result.Interval, server []*proto.PortCounters) {
	if tl == nil {
		return
	}
	tl.Stop()
	for i := range ivs {
		c := &result.CounterDeltas{}
		if i+1 < len(tl.snaps) && tl.snaps[i] != nil && tl.snaps[i+1] != nil {
			d, reset := Deltas(tl.snaps[i], tl.snaps[i+1])
			c.Client = &result.PortCounters{Device: tl.device, Port: tl.port, Deltas: d, Reset: reset}
		}
		if i < len(server) && server[i] != nil {
			c.Server = ServerCounters(server[i])
		}
		if c.Client != nil || c.Server != nil {
			ivs[i].Counters = c
		}
	}
}

// WriteHLog writes one note per interval that has counters to l, after
// the test's interval lines (hist.LogWriter.WriteIntervalNote): the test's
// tag, the interval's start and length, and Note's list.
func (tl *Client) WriteHLog(l *hist.LogWriter, ivs []result.Interval) error {
	if tl == nil || l == nil {
		return nil
	}
	tl.mu.Lock()
	wall, tag := tl.wallStart, tl.tag
	tl.mu.Unlock()
	for _, iv := range ivs {
		if iv.Counters == nil {
			continue
		}
		start := wall.Add(time.Duration(iv.StartNS))
		end := wall.Add(time.Duration(iv.EndNS))
		if err := l.WriteIntervalNote("Counters", tag, start, end, Note(iv.Counters)); err != nil {
			return err
		}
	}
	return nil
}

// Note is an interval's counters as "client.NAME=N;server.NAME=N", sorted
// by side and name; a counter that went down is "SIDE.NAME=reset"; "":
// nothing moved.
func Note(c *result.CounterDeltas) string {
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

// ServerCounters is a server's counters in the result's form, with only
// the positive deltas, as the schema has them, whatever the peer sent.
func ServerCounters(p *proto.PortCounters) *result.PortCounters {
	deltas := map[string]int64{}
	for name, v := range p.Deltas {
		if v > 0 {
			deltas[name] = v
		}
	}
	return &result.PortCounters{Device: p.Device, Port: p.Port, Deltas: deltas, Reset: p.Reset}
}

// Server is the server's side of a test's counter timeline: its port
// counters at each of the client's marks, kept as the deltas between
// consecutive marks. At most proto.MaxIntervalMarks marks are kept; marks
// out of order are ignored. Its methods are safe on a nil *Server (marks
// ignored), not for concurrent use.
type Server struct {
	device string
	port   int
	read   Reader

	started bool
	prev    map[string]uint64 // at the last mark kept (nil: unreadable)
	list    []*proto.PortCounters
}

// NewServer returns the mark series of a test on device's port, whose
// counters read reads.
func NewServer(device string, port int, read Reader) *Server {
	return &Server{device: device, port: port, read: read}
}

// Mark takes mark k: the counters now, and the deltas since the previous
// mark.
func (m *Server) Mark(k int) {
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
			d, reset := Deltas(m.prev, cur)
			p = &proto.PortCounters{Device: m.device, Port: m.port, Deltas: d, Reset: reset}
		}
		m.list = append(m.list, p)
		m.prev = cur
	}
}

// Series is what the server returns: nil when no interval has counters.
func (m *Server) Series() []*proto.PortCounters {
	if m == nil || len(m.list) == 0 {
		return nil
	}
	return m.list
}

// Fit drops res's interval counters when the result message would exceed
// the protocol's payload limit with them, and says so.
func Fit(res *proto.ServerResult) error {
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
