package device

import (
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/timeline"
)

// What the fabric did during each test: each side reads its own port's
// counters (sysfs ports/N/counters/ and ports/N/hw_counters/) once its QPs
// are connected, before the test's traffic, and again after the test's end;
// the server sends its deltas in its result (proto.ServerResult.Counters).
// Deltas only: counters that did not move are left out, counters that went
// down (reset or wrapped) are listed as reset. The traffic counted includes
// the warm-up; the kernel caches hw_counters for their lifespan (10 ms by
// default), so a read can lag the port by that much.

// sysRoot is the directory under which the counters are read: "/" on a
// live system, a fake tree in tests.
var sysRoot = "/"

// readPortCounters reads dev's port counters under sysRoot
// (hostenv.PortCounters).
func readPortCounters(dev string, port int) map[string]uint64 {
	return hostenv.PortCounters(sysRoot, dev, port)
}

// counterDeltas returns after − before of each counter in both snapshots
// that moved up, and, sorted, the counters that went down (timeline.Deltas).
var counterDeltas = timeline.Deltas

// CounterSnapshot is one side's port counters before a test.
type CounterSnapshot struct {
	device string
	port   int
	before map[string]uint64
}

// SnapshotCounters reads dev's port counters before a test. It returns nil
// (whose deltas are nil) when dev is nil or no counter can be read.
func SnapshotCounters(dev *Device) *CounterSnapshot {
	if dev == nil || dev.Ctx == nil {
		return nil
	}
	s := &CounterSnapshot{device: dev.Ctx.Name(), port: dev.Port.Port}
	if s.before = readPortCounters(s.device, s.port); s.before == nil {
		return nil
	}
	return s
}

// deltas reads the counters again and returns what moved since the
// snapshot; nil for a nil snapshot or when the counters are gone.
func (s *CounterSnapshot) deltas() *result.PortCounters {
	if s == nil {
		return nil
	}
	after := readPortCounters(s.device, s.port)
	if after == nil {
		return nil
	}
	d, reset := counterDeltas(s.before, after)
	return &result.PortCounters{Device: s.device, Port: s.port, Deltas: d, Reset: reset}
}

// ServerDeltas is deltas in the form of the server's result message.
func (s *CounterSnapshot) ServerDeltas() *proto.PortCounters {
	d := s.deltas()
	if d == nil {
		return nil
	}
	return &proto.PortCounters{Device: d.Device, Port: d.Port, Deltas: d.Deltas, Reset: d.Reset}
}

// TestCounters takes the client's deltas now and joins them with the
// server's (from its result message) into a result's counters; nil when
// neither side has any.
func (s *CounterSnapshot) TestCounters(server *proto.PortCounters) *result.CounterDeltas {
	c := &result.CounterDeltas{Client: s.deltas()}
	if server != nil {
		c.Server = timeline.ServerCounters(server)
	}
	if c.Client == nil && c.Server == nil {
		return nil
	}
	return c
}

// Counter timelines (bench/timeline): each interval's counters on both
// sides. The client reads its counters at its interval boundaries in the
// timeline's goroutine, the server when the client's marks arrive.

// StartTimeline starts the client's counter timeline of a test on dev
// (nil, a no-op, for a side without RDMA device). c, when not nil, is the
// control connection of a server that takes marks.
func StartTimeline(dev *Device, c ctrl.Chan) *timeline.Client {
	if dev == nil || dev.Ctx == nil {
		return nil
	}
	name, port := dev.Ctx.Name(), dev.Port.Port
	return timeline.NewClient(name, port, c, func() map[string]uint64 { return readPortCounters(name, port) })
}

// NewMarkSeries returns the server's side of a test's counter timeline on
// dev (nil when dev is nil: the marks are ignored).
func NewMarkSeries(dev *Device) *timeline.Server {
	if dev == nil || dev.Ctx == nil {
		return nil
	}
	name, port := dev.Ctx.Name(), dev.Port.Port
	return timeline.NewServer(name, port, func() map[string]uint64 { return readPortCounters(name, port) })
}
