package peer

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The in-memory stand-ins of the loops' sequencing tests (loop_test.go):
// a loopExchange pair, and loopEngines that log their calls. Each side's
// log holds its swaps and its engine calls in order.

// fakeWait bounds a fake swap's wait for the peer's (a side that stopped
// swapping).
const fakeWait = 2 * time.Second

// fakeStep is one swap as a fake end sends it to the peer: its kind
// ("dest", "report", "swap") and the report of a "report".
type fakeStep struct {
	kind string
	rep  wire.BWReport
}

// fakeEnd is one end of an in-memory loopExchange pair: each swap logs
// its step and meets the peer's, which must be a swap of the same kind.
type fakeEnd struct {
	log    *[]string
	out    chan<- fakeStep
	in     <-chan fakeStep
	client bool // set by SetClient: this side writes first
}

// fakePair is a connected pair of fake ends logging into cl and sl.
func fakePair(cl, sl *[]string) (client, server *fakeEnd) {
	a, b := make(chan fakeStep, 1), make(chan fakeStep, 1)
	return &fakeEnd{log: cl, out: a, in: b, client: true}, &fakeEnd{log: sl, out: b, in: a}
}

func (f *fakeEnd) swap(mine fakeStep) (fakeStep, error) {
	f.out <- mine
	select {
	case got := <-f.in:
		if got.kind != mine.kind {
			return got, fmt.Errorf("this side's %s met the peer's %s", mine.kind, got.kind)
		}
		return got, nil
	case <-time.After(fakeWait):
		return fakeStep{}, fmt.Errorf("%s: the peer did not swap", mine.kind)
	}
}

func (f *fakeEnd) Dest(ours wire.Dest, withGID bool, field string) (wire.Dest, error) {
	*f.log = append(*f.log, "dest "+field)
	_, err := f.swap(fakeStep{kind: "dest"})
	return wire.Dest{}, err
}

func (f *fakeEnd) SwapBWReport(ours wire.BWReport) (wire.BWReport, error) {
	*f.log = append(*f.log, "report")
	got, err := f.swap(fakeStep{kind: "report", rep: ours})
	return got.rep, err
}

func (f *fakeEnd) Swap(field string, mine []byte, n int) ([]byte, error) {
	first := ""
	if f.client {
		first = " first"
	}
	*f.log = append(*f.log, "swap "+field+first)
	_, err := f.swap(fakeStep{kind: "swap"})
	return make([]byte, n), err
}

func (f *fakeEnd) SetTimeout(d time.Duration) { *f.log = append(*f.log, "timeout "+d.String()) }

func (f *fakeEnd) SetClient(client bool) { f.client = client }

// fakeEngines is loopEngines that log their calls: a loop of n bytes
// makes fakeIters operations at 1 MiB/s.
type fakeEngines struct{ log *[]string }

// fakeIters is the operations of each fake loop.
const fakeIters = 16

func (f *fakeEngines) add(format string, a ...any) {
	*f.log = append(*f.log, fmt.Sprintf(format, a...))
}

func (f *fakeEngines) figures(sz spec.Spec) result.Result {
	r := measure.BaseResult(sz, nil)
	r.Iterations = fakeIters
	r.Bandwidth = mibBandwidth(1, 0)
	return r
}

func (f *fakeEngines) resize(n int) error { f.add("resize %d", n); return nil }

func (f *fakeEngines) base(sz spec.Spec) result.Result { return measure.BaseResult(sz, nil) }

func (f *fakeEngines) startLat(reply bool) {
	if reply {
		f.add("lat waits first")
		return
	}
	f.add("lat posts first")
}

func (f *fakeEngines) lat(sz spec.Spec) (result.Result, error) {
	f.add("lat %d", sz.Size)
	return f.figures(sz), nil
}

func (f *fakeEngines) openPeak(first bool) error {
	if first {
		f.add("peak on QP 0")
		return nil
	}
	f.add("peak on all QPs")
	return nil
}

func (f *fakeEngines) closePeak() { f.add("peak closed") }

func (f *fakeEngines) armPeak() error { f.add("peak armed"); return nil }

func (f *fakeEngines) bw(sz spec.Spec) (result.Result, error) {
	f.add("bw %d", sz.Size)
	return f.figures(sz), nil
}

func (f *fakeEngines) receive(sz spec.Spec) (result.Result, error) {
	f.add("receive %d", sz.Size)
	return f.figures(sz), nil
}

func (f *fakeEngines) bidir(_ context.Context, sz spec.Spec) (kinds.BidirRun, *result.Bandwidth, error) {
	f.add("bidir %d", sz.Size)
	return kinds.BidirRun{Ops: fakeIters, First: 0, Last: 1e9}, nil, nil
}

func (f *fakeEngines) connSetup() *result.ConnSetup { f.add("conn setup"); return nil }
