package peer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestPerftestSizeSwaps: the record swaps between the sizes of -a, as
// perftest 6.06's tools make them.
func TestPerftestSizeSwaps(t *testing.T) {
	for _, c := range []struct {
		op, mode      string
		all           bool
		before, after bool
	}{
		{result.OpSend, result.ModeLat, true, true, false},
		{result.OpSend, result.ModeBW, true, true, true},
		{result.OpWrite, result.ModeLat, true, false, false},
		{result.OpWrite, result.ModeBW, true, false, false},
		{result.OpRead, result.ModeLat, true, false, false},
		{result.OpRead, result.ModeBW, true, false, false},
		{result.OpSend, result.ModeBW, false, false, false},
		{result.OpSend, result.ModeLat, false, false, false},
	} {
		b, a := perftestSizeSwaps(spec.Spec{Op: c.op, Mode: c.mode}, c.all)
		if b != c.before || a != c.after {
			t.Errorf("%s %s all=%v: before %v after %v, want %v %v", c.op, c.mode, c.all, b, a, c.before, c.after)
		}
	}
}

// TestPassiveTimeoutSizes: a passive side waits for every size of -a.
func TestPassiveTimeoutSizes(t *testing.T) {
	s := spec.Spec{Iters: 1000}
	one := passiveTimeout(0, s, []int{65536})
	if want := wire.DefaultTimeout + time.Second + 65536*time.Millisecond; one != want {
		t.Errorf("one size: %v, want %v", one, want)
	}
	two := passiveTimeout(0, s, []int{65536, 65536})
	if two-one != one-wire.DefaultTimeout {
		t.Errorf("two sizes: %v, one: %v", two, one)
	}
}

// TestPerftestBidirResult: a -b side prints the sums of both sides'
// reports, as perftest's print_full_bw_report, and keeps each side's.
func TestPerftestBidirResult(t *testing.T) {
	mine := result.NewSideResult(65536, 300, 0, 1e9) // 18.75 MiB/s
	sent := wire.BWReport{Size: 65536, Iters: 300, BWPeak: 20, BWAvg: mine.Bandwidth.MiBPerSec}
	got := wire.BWReport{Size: 65536, Iters: 300, BWPeak: 22, BWAvg: 16.25, MsgRateAvg: 0.00026}
	for _, client := range []bool{true, false} {
		r := dropInBidirResult(result.Result{SizeBytes: 65536}, mine, sent, got, client)
		if !r.Bidirectional || r.Iterations != 600 || r.Bandwidth.MiBPerSec != 18.75+16.25 || r.PerftestPeak == nil || r.PerftestPeak.MiBPerSec != 42 {
			t.Fatalf("client %v: %+v", client, r)
		}
		own, peer := r.Sides.Client, r.Sides.Server
		if !client {
			own, peer = peer, own
		}
		if own.Ops != 300 || own.Bandwidth.MiBPerSec != 18.75 || peer.Bandwidth.MiBPerSec != 16.25 || peer.Bytes != 300*65536 {
			t.Errorf("client %v: sides %+v", client, r.Sides)
		}
	}
	if r := dropInBidirResult(result.Result{}, mine, wire.BWReport{}, wire.BWReport{}, true); r.PerftestPeak != nil {
		t.Error("a peak without one from either side")
	}
}

// TestLoopSequencing: each loop kind's swaps with the perftest peer and
// its C loops, in order, on both sides (the client's and the server's
// loop kinds run against each other on an in-memory pair, which fails a
// swap that meets another kind of swap or none), for one size and -a,
// latency and bandwidth, SEND's receiver, the passive sides and -b.
func TestLoopSequencing(t *testing.T) {
	closing := []string{"dest closing handshake"}
	done := func(first bool) []string {
		if first {
			return append(closing, "timeout 5s", "swap done first")
		}
		return append(closing, "timeout 5s", "swap done")
	}
	passive := func(s spec.Spec, sizes []int) string {
		_, n := runSizes(sizes, s.Size)
		return "timeout " + passiveTimeout(0, s, n).String()
	}
	cat := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	lat := func(op string) spec.Spec { return spec.Spec{Op: op, Mode: result.ModeLat, Size: 4, Iters: 1000} }
	bw := func(op string) spec.Spec { return spec.Spec{Op: op, Mode: result.ModeBW, Size: 4, Iters: 1000} }
	bidir := func(op string) spec.Spec { s := bw(op); s.Bidirectional = true; return s }
	duration := bw(result.OpSend)
	duration.Duration = time.Second
	for _, c := range []struct {
		name           string
		s              spec.Spec
		sizes          []int // -a
		client, server []string
	}{
		{"write lat", lat(result.OpWrite), nil,
			cat([]string{"lat waits first", "lat 4", "conn setup"}, closing),
			cat([]string{"lat posts first", "lat 4", "conn setup"}, closing)},
		{"send lat -a", lat(result.OpSend), []int{2, 4},
			cat([]string{"lat posts first", "resize 2", "lat 2", "dest sync before 4 bytes", "resize 4", "lat 4", "conn setup"}, closing),
			cat([]string{"lat waits first", "resize 2", "lat 2", "dest sync before 4 bytes", "resize 4", "lat 4", "conn setup"}, closing)},
		{"write lat -a", lat(result.OpWrite), []int{2, 4},
			cat([]string{"lat waits first", "resize 2", "lat 2", "resize 4", "lat 4", "conn setup"}, closing),
			cat([]string{"lat posts first", "resize 2", "lat 2", "resize 4", "lat 4", "conn setup"}, closing)},
		{"read lat -a (passive server)", lat(result.OpRead), []int{2, 4},
			cat([]string{"lat posts first", "resize 2", "lat 2", "resize 4", "lat 4", "conn setup"}, closing),
			cat([]string{passive(lat(result.OpRead), []int{2, 4})}, closing)},
		{"write bw (passive server)", bw(result.OpWrite), nil,
			cat([]string{"peak on all QPs", "peak armed", "bw 4", "dest barrier after the loop", "report", "peak closed", "conn setup"}, done(false)),
			cat([]string{passive(bw(result.OpWrite), nil), "dest barrier after the loop", "timeout 0s", "report"}, done(true))},
		{"read bw -a (passive server)", bw(result.OpRead), []int{2, 4},
			cat([]string{"peak on all QPs", "resize 2", "peak armed", "bw 2", "resize 4", "peak armed", "bw 4", "dest barrier after the loop", "report", "peak closed", "conn setup"}, done(false)),
			cat([]string{passive(bw(result.OpRead), []int{2, 4}), "dest barrier after the loop", "timeout 0s", "report"}, done(true))},
		{"send bw (receiver)", bw(result.OpSend), nil,
			cat([]string{"peak on all QPs", "peak armed", "bw 4", "peak closed", "conn setup"}, done(false)),
			cat([]string{"receive 4", "conn setup"}, done(true))},
		{"send bw -a (receiver)", bw(result.OpSend), []int{2, 4},
			cat([]string{"peak on all QPs", "resize 2", "peak armed", "bw 2", "dest sync after 2 bytes", "dest sync before 4 bytes", "resize 4", "peak armed", "bw 4", "dest sync after 4 bytes", "peak closed", "conn setup"}, done(false)),
			cat([]string{"resize 2", "receive 2", "dest sync after 2 bytes", "dest sync before 4 bytes", "resize 4", "receive 4", "dest sync after 4 bytes", "conn setup"}, done(true))},
		{"send bw -D (receiver)", duration, nil,
			cat([]string{"peak on all QPs", "peak armed", "bw 4", "peak closed", "conn setup"}, done(false)),
			cat([]string{"receive 4", "conn setup"}, done(true))},
		{"write bw -b", bidir(result.OpWrite), nil,
			cat([]string{"peak on QP 0", "dest sync before the loops (-b)", "bidir 4", "report", "peak closed", "conn setup"}, done(false)),
			cat([]string{"peak on QP 0", "dest sync before the loops (-b)", "bidir 4", "report", "peak closed", "conn setup"}, done(true))},
		{"send bw -b", bidir(result.OpSend), nil,
			cat([]string{"peak on QP 0", "bidir 4", "report", "peak closed", "conn setup"}, done(false)),
			cat([]string{"peak on QP 0", "bidir 4", "report", "peak closed", "conn setup"}, done(true))},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cl, sl []string
			ce, se := fakePair(&cl, &sl)
			runs := [2]*Outcome{}
			errs := make(chan error, 2)
			for i, end := range []*fakeEnd{ce, se} {
				client := i == 0
				p := &dropInSide{cfg: Config{Client: client, Spec: c.s, Sizes: c.sizes}, s: c.s, mine: make([]wire.Dest, 1),
					ex: end, eng: &fakeEngines{log: end.log}}
				p.all, p.sizes = runSizes(c.sizes, c.s.Size)
				runs[i] = &Outcome{Timed: timedSide(c.s, client)}
				go func() { errs <- p.runLoop(context.Background(), runs[i]) }()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if !slices.Equal(cl, c.client) {
				t.Errorf("client:\n got %q\nwant %q", cl, c.client)
			}
			if !slices.Equal(sl, c.server) {
				t.Errorf("server:\n got %q\nwant %q", sl, c.server)
			}
			for i, run := range runs {
				if want := len(c.sizes); run.Timed && want > 0 && len(run.Results) != want {
					t.Errorf("side %d: %d results, want one per size (%d)", i, len(run.Results), want)
				}
				if run.Result.Iterations == 0 && (run.Timed || c.s.Mode == result.ModeBW) {
					t.Errorf("side %d: no iterations in its result", i)
				}
			}
		})
	}
}
