package peer

import (
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
