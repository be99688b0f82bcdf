package kinds

import (
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestBidirValidate(t *testing.T) {
	ok := spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 65536, Iters: 100, TxDepth: 128, CQMod: 100, RxDepth: 512, Bidirectional: true}
	for _, mod := range []func(*spec.Spec){
		func(*spec.Spec) {},
		func(s *spec.Spec) { s.Op = result.OpSend },
		func(s *spec.Spec) { s.Op = result.OpRead },
		func(s *spec.Spec) { s.Op, s.Size = result.OpFetchAdd, 8 },
		func(s *spec.Spec) { s.Op, s.Size = result.OpCmpSwap, 8 },
		func(s *spec.Spec) { s.QPType = result.QPTypeUC },                         // WRITE on UC: no receiver to lose a message
		func(s *spec.Spec) { s.Event = true },                                     // WRITE: the sender loops sleep on their send CQs
		func(s *spec.Spec) { s.Iters, s.Duration = 0, time.Second },               // duration mode
		func(s *spec.Spec) { s.RDMACM, s.MRMode = true, result.MRModePool },       // rdma_cm
		func(s *spec.Spec) { s.Op, s.PostList, s.RxDepth = result.OpSend, 8, 16 }, // post lists, a small receive queue
	} {
		s := ok
		mod(&s)
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, c := range []struct {
		mod  func(*spec.Spec)
		want string
	}{
		{func(s *spec.Spec) { s.Mode, s.TxDepth, s.CQMod = result.ModeLat, 1, 1 }, "-b (bidirectional) applies to bandwidth tests"},
		{func(s *spec.Spec) { s.Op, s.Transport = result.OpSend, result.TransportTCP }, "not to the TCP baseline"},
		{func(s *spec.Spec) { s.QPs, s.Threads = 4, 1 }, "-b (bidirectional) with --qps 4 is not supported"},
		{func(s *spec.Spec) { s.Op, s.QPType = result.OpSend, result.QPTypeUC }, "SEND on UC QPs is not supported"},
		{func(s *spec.Spec) { s.Op, s.QPType, s.Size = result.OpSend, result.QPTypeUD, 1024 }, "SEND on UD QPs is not supported"},
		{func(s *spec.Spec) { s.Op, s.Event = result.OpSend, true }, "SEND with --event is not supported"},
		{func(s *spec.Spec) { s.MRMode = result.MRModePerOp }, "--mr-mode per-op is not supported"},
		{func(s *spec.Spec) { s.Verify = true }, "-b (bidirectional) with --verify is not supported"},
	} {
		s := ok
		c.mod(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", s, err, c.want)
		}
	}
}

// TestBidirPlan: -b with the default modes applies to bandwidth only; with
// an explicit latency mode it is refused by name.
func TestBidirPlan(t *testing.T) {
	specs, err := spec.Plan{Template: spec.Spec{Bidirectional: true, Warmup: -1}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if (s.Mode == result.ModeBW) != s.Bidirectional {
			t.Errorf("%s: bidirectional %v", s.Name(), s.Bidirectional)
		}
		if s.Bidirectional && s.TimedInterval() != spec.BidirInterval {
			t.Errorf("%s: timed interval %q", s.Name(), s.TimedInterval())
		}
	}
	if _, err := (spec.Plan{Modes: []string{result.ModeLat, result.ModeBW}, Template: spec.Spec{Bidirectional: true}}).Specs(); err == nil ||
		!strings.Contains(err.Error(), "send lat 2B: -b (bidirectional) applies to bandwidth tests") {
		t.Errorf("explicit lat with -b: %v", err)
	}
}

// TestBidirRemoteAccess: with -b each side grants what the other side's
// operation needs, and nothing else; without -b the one-way table holds.
func TestBidirRemoteAccess(t *testing.T) {
	for _, tc := range []struct {
		op            string
		client, iwarp bool
		want          verbs.Access
	}{
		{result.OpWrite, true, false, verbs.AccessRemoteWrite},
		{result.OpWrite, false, false, verbs.AccessRemoteWrite},
		{result.OpRead, true, false, verbs.AccessRemoteRead},
		{result.OpRead, false, false, verbs.AccessRemoteRead},
		{result.OpRead, true, true, verbs.AccessRemoteRead | verbs.AccessRemoteWrite}, // iWARP: each side's READ sink too
		{result.OpRead, false, true, verbs.AccessRemoteRead | verbs.AccessRemoteWrite},
		{result.OpFetchAdd, true, false, verbs.AccessRemoteAtomic},
		{result.OpCmpSwap, false, false, verbs.AccessRemoteAtomic},
		{result.OpSend, true, false, 0},
		{result.OpSend, false, true, 0},
	} {
		s := spec.Spec{Op: tc.op, Mode: result.ModeBW, Bidirectional: true}
		if got := endpoint.RemoteAccess(s, tc.client, tc.iwarp); got != tc.want {
			t.Errorf("-b %s client=%v iwarp=%v: %s, want %s", tc.op, tc.client, tc.iwarp, got, tc.want)
		}
		if c := endpoint.PoolConfig(s, tc.client, tc.iwarp, 1, false, false); c.Access != verbs.AccessLocalWrite|tc.want|verbs.AccessRelaxedOrdering {
			t.Errorf("-b %s client=%v: pool access %s", tc.op, tc.client, c.Access)
		}
	}
}

// TestBidirResult: the result's figures are the sums of both sides', each
// side's are its own, and the latency is the client's.
func TestBidirResult(t *testing.T) {
	s := spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 65536, Iters: 1000, Bidirectional: true}
	h := hist.New()
	for i := range 100 {
		h.Record(int64(100_000 + 1000*i))
	}
	run := BidirRun{warmed: 128, Ops: 1000, First: 5e9, Last: 6e9, lat: h, user: 6e8, sys: 4e8}
	r, err := bidirResult(measure.BaseResult(s, nil), s, run, proto.Direction{Ops: 900, Warmup: 120, DurationNS: 9e8})
	if err != nil {
		t.Fatal(err)
	}
	c, v := r.Sides.Client, r.Sides.Server
	if !r.Bidirectional || c.Ops != 1000 || v.Ops != 900 || c.Bytes != 1000*65536 || v.Bytes != 900*65536 || c.Warmup != 128 ||
		v.Warmup != 120 || c.DurationNS != 1e9 || v.DurationNS != 9e8 {
		t.Fatalf("sides %+v", *r.Sides)
	}
	if r.Iterations != 1900 || r.Warmup != 248 || r.DurationNS != 1e9 || r.Samples != 100 || r.TimedInterval != spec.BidirInterval {
		t.Errorf("iterations %d, warm-up %d, duration %d, samples %d, interval %q", r.Iterations, r.Warmup, r.DurationNS, r.Samples, r.TimedInterval)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	// 1000 x 64 KiB in 1 s and 900 x 64 KiB in 0.9 s: 62.5 MiB/s each
	if !near(c.Bandwidth.MiBPerSec, 62.5) || !near(v.Bandwidth.MiBPerSec, 62.5) || !near(r.Bandwidth.MiBPerSec, 125) ||
		!near(r.Bandwidth.Mpps, c.Bandwidth.Mpps+v.Bandwidth.Mpps) || !near(r.Bandwidth.MBPerSec, c.Bandwidth.MBPerSec+v.Bandwidth.MBPerSec) ||
		!near(r.Bandwidth.GbitPerSec, c.Bandwidth.GbitPerSec+v.Bandwidth.GbitPerSec) || !near(r.Bandwidth.Mpps, 0.002) {
		t.Errorf("bandwidth %+v = client %+v + server %+v?", r.Bandwidth, c.Bandwidth, v.Bandwidth)
	}
	if r.CPU == nil || r.CPU.ClientUserNS != 6e8 || !near(r.CPU.ClientUSPerMsg, 1e9/1e3/1900) {
		t.Errorf("cpu %+v: per message over both sides' 1900", r.CPU)
	}
}

// TestBidirBarrierMessages: the server reads the client's barrier in order,
// skips heartbeats, ends at the end; out of order is an error.
func TestBidirBarrierMessages(t *testing.T) {
	run := func(phases ...string) (proto.Ready, bool, bool, error) {
		a, b := net.Pipe()
		ca, cb := proto.NewConn(a, time.Second), proto.NewConn(b, time.Second)
		defer ca.Close()
		defer cb.Close()
		go func() {
			for _, p := range phases {
				if ca.Send(proto.MsgReady, proto.Ready{Phase: p, Total: 7}) != nil {
					return
				}
			}
			ca.Close()
		}()
		warmup, measure := make(chan struct{}), make(chan struct{})
		var end proto.Ready
		err := readBidirClient(cb, warmup, measure, &end, nil)
		closed := func(ch chan struct{}) bool {
			select {
			case <-ch:
				return true
			default:
				return false
			}
		}
		return end, closed(warmup), closed(measure), err
	}
	end, w, m, err := run(proto.PhaseAlive, proto.PhaseWarmup, proto.PhaseAlive, proto.PhaseMeasure, proto.PhaseAlive, proto.PhaseEnd)
	if err != nil || !w || !m || end.Phase != proto.PhaseEnd || end.Total != 7 {
		t.Errorf("in order: end %+v, warmup %v, measure %v, %v", end, w, m, err)
	}
	for _, c := range []struct {
		phases []string
		want   string
	}{
		{[]string{proto.PhaseMeasure}, `client sent "measure" in a bidirectional test, expected "warmup"`},
		{[]string{proto.PhaseWarmup, proto.PhaseEnd}, `client sent "end" in a bidirectional test, expected "measure"`},
		{[]string{proto.PhaseWarmup, proto.PhaseWarmup}, `expected "measure"`},
	} {
		if _, _, _, err := run(c.phases...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.phases, err, c.want)
		}
	}
	if _, w, _, err := run(proto.PhaseWarmup); err == nil || !w {
		t.Errorf("client gone after warmup: warmup %v, %v", w, err)
	}
}
