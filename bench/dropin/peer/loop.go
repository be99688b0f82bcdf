package peer

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The loop part of the drop-in facing perftest (peer.go): what each
// side does once its QPs are connected and the barrier after RTR is
// done: its loop kind (loopOf: each size's timed loop, or the passive
// wait, and the reports), then the closing handshake (finish). The kinds
// swap through loopExchange and run their C loops through loopEngines
// (exchange.go, engines.go), so that their sequencing is unit-tested
// without RDMA and without sockets (loop_test.go).

// dropInSide is one side of a test against perftest: what Run's
// steps set up, in order (the device and channel, the exchange's
// parameters and environment, the QPs and records), then the loop's sizes.
type dropInSide struct {
	cfg     Config
	s       spec.Spec // cfg.Spec as Run adjusted it
	wc      *wire.Conn
	nc      net.Conn
	dev     *device.Device
	cc      *PerftestCMConn // -R: the rdma_cm channel, else nil
	env     result.Env      // device.SideEnv's, collected before the first record swap (negotiate)
	eps     *endpoint.Test
	qps     []*endpoint.Endpoint // eps.measured()
	mine    []wire.Dest          // this side's records, one per QP
	withGID bool
	all     bool         // perftest's -a (RUN_ALL): cfg.Sizes on the same QPs
	sizes   []int        // the message sizes in order: cfg.Sizes, or s.Size alone
	ex      loopExchange // the loop's swaps with the peer: wc
	eng     loopEngines  // the loop's C loops: qpEngines on qps
}

// loopKind is one of the drop-in's perftest loops: this side's part of
// each size (the timed loop, or the passive wait) and the reports, up to
// the closing handshake, which finish does for every kind.
type loopKind interface {
	run(ctx context.Context, p *dropInSide, run *Outcome) error
}

// loopOf is the loop kind of a side of s: the client, or the server;
// timed, the side that times the run (Run's Outcome.Timed).
func loopOf(s spec.Spec, client, timed bool) loopKind {
	switch {
	case s.Mode == result.ModeLat && timed:
		return latTimed{}
	case s.Mode == result.ModeLat: // a passive side: the client's loop runs until its closing record
		return latPassive{}
	case s.Bidirectional: // -b: both sides send (bidir.go)
		return bidirLoop{}
	case client:
		return bwClient{}
	case s.Op == result.OpSend: // the receiver: perftest's client sends -n messages per QP
		return sendReceiver{}
	default: // WRITE, READ, atomics: passive; the table is the client's figures (of its last size with -a)
		return bwPassive{}
	}
}

// loop runs the loop part of Run: this side's part of each size
// (the timed loop, or the passive wait), then the closing handshake.
func (p *dropInSide) loop(ctx context.Context, run *Outcome) (*Outcome, error) {
	env := p.env
	env.PathMTU, env.InlineSizeGranted = run.MTU, p.eps.Probe.Inline
	run.Env = env
	abort := context.AfterFunc(ctx, func() {
		for _, e := range p.qps {
			e.Eng.Abort()
		}
	})
	defer abort()
	p.all, p.sizes = runSizes(p.cfg.Sizes, p.s.Size)
	p.ex = p.wc
	p.eng = &qpEngines{cfg: p.cfg, s: p.s, all: p.all, dev: p.dev, cc: p.cc, eps: p.eps, qps: p.qps}
	return run, p.runLoop(ctx, run)
}

// runLoop is this side's loop kind, then the closing handshake.
func (p *dropInSide) runLoop(ctx context.Context, run *Outcome) error {
	if err := loopOf(p.s, p.cfg.Client, run.Timed).run(ctx, p, run); err != nil {
		return err
	}
	return p.finish(run)
}

// sized is s for message size n, its engines set to n (-a; one size: as
// created).
func (p *dropInSide) sized(n int) (spec.Spec, error) {
	sz := p.s
	sz.Size = n
	if !p.all {
		return sz, nil
	}
	return sz, p.eng.resize(n)
}

// sync is perftest's record swap before or after a size of -a, where its
// tool has one (perftestSizeSwaps).
func (p *dropInSide) sync(what string, n int) error {
	before, after := perftestSizeSwaps(p.s, p.all)
	if (what == "sync before" && !before) || (what == "sync after" && !after) {
		return nil
	}
	_, err := p.ex.Dest(p.mine[0], p.withGID, fmt.Sprintf("%s %d bytes", what, n))
	return err
}

// enter starts size i of the run, n bytes: the sync before it (the first
// size's is the barrier after RTR), then its spec and engines.
func (p *dropInSide) enter(i, n int) (spec.Spec, error) {
	if i > 0 {
		if err := p.sync("sync before", n); err != nil {
			return spec.Spec{}, err
		}
	}
	return p.sized(n)
}

// finish ends the run: the timed side's connection setup on its results,
// the closing handshake, and the bandwidth tools' "done".
func (p *dropInSide) finish(run *Outcome) error {
	s, ex, cc := p.s, p.ex, p.cc
	run.Result = run.Results[len(run.Results)-1]
	if run.Timed {
		conn := p.eng.connSetup()
		for i := range run.Results {
			run.Results[i].Connection = conn
		}
		run.Result.Connection = conn
	}
	if perftest.CloseRecord(s, cc != nil) { // not ib_write_lat -R (bench/perftest/peerqp.go)
		if _, err := ex.Dest(p.mine[0], p.withGID, "closing handshake"); err != nil && !wire.PeerClosed(err) {
			return perftest.LostAtClose(s, p.cfg.Client, isTimeout(err), err)
		}
	}
	run.End = time.Now()
	if s.Mode == result.ModeBW && cc == nil { // perftest 6.06's bandwidth tools then swap "done", the server first (not with -R)
		ex.SetTimeout(5 * time.Second)
		ex.SetClient(!p.cfg.Client)
		if _, err := ex.Swap("done", []byte("done\x00"), 5); err != nil && !wire.PeerClosed(err) {
			return err
		}
	}
	return nil
}

// runSizes is the message sizes of a run in order, all telling -a: sizes
// (Config.Sizes), or size alone where sizes is empty.
func runSizes(sizes []int, size int) (all bool, _ []int) {
	if len(sizes) > 0 {
		return true, sizes
	}
	return false, []int{size}
}

// sizeErr names the size of -a (all) that err ended.
func sizeErr(all bool, n int, err error) error {
	if !all {
		return err
	}
	return fmt.Errorf("%d bytes: %w", n, err)
}

// perftestSizeSwaps is where perftest 6.06 swaps QP 0's record around each
// size of -a (all): before each size's loop but the first (whose swap is
// the barrier after RTR) in the SEND tools, whose receiver posts that
// size's receives first, and after each size's loop in ib_send_bw. The
// other tools run their sizes back to back: the WRITE ping-pong paces
// itself, and the READ, atomic and WRITE bandwidth servers are passive.
func perftestSizeSwaps(s spec.Spec, all bool) (before, after bool) {
	if !all || s.Op != result.OpSend {
		return false, false
	}
	return true, s.Mode == result.ModeBW
}

// sendPerftestReport gives a passive perftest server the client's figures
// (not for SEND: perftest's ib_send_bw server measures its own).
func sendPerftestReport(ex loopExchange, mine wire.Dest, withGID bool, s spec.Spec, r result.Result) error {
	if s.Op == result.OpSend {
		return nil
	}
	if _, err := ex.Dest(mine, withGID, "barrier after the loop"); err != nil {
		return err
	}
	peak := 0.0 // perftest's, where computed (as perftest sends 0 without one)
	if r.PerftestPeak != nil {
		peak = r.PerftestPeak.MiBPerSec
	}
	_, err := ex.SwapBWReport(wire.BWReport{Size: uint64(s.Size), Iters: uint64(r.Iterations), BWPeak: peak,
		BWAvg: r.Bandwidth.MiBPerSec, MsgRateAvg: r.Bandwidth.Mpps})
	return err
}

// passiveTimeout bounds a passive side's wait for the client's loop: the
// step timeout, plus 1 ms an iteration and the data at 1 MB/s (a loaded
// software-RDMA guest moves 4 MB/s), for each size of the run.
func passiveTimeout(step time.Duration, s spec.Spec, sizes []int) time.Duration {
	t := max(step, wire.DefaultTimeout) + s.Duration // -D: the client's whole run
	for _, n := range sizes {
		t += time.Duration(s.Iters)*time.Millisecond + time.Duration(s.Iters*int64(n))*time.Microsecond
	}
	return t
}
