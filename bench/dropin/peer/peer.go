// Package peer is the drop-in's side of a test facing a real perftest tool
// (docs/perftest.md, "Facing perftest"): perftest's out-of-band exchange
// (bench/perftest/wire) on the TCP connection, rdmabench's endpoints and C
// loops on the QP (bench/endpoint, bench/measure, bench/kinds), run the
// way perftest's peer expects them. The rest of the drop-in (its server
// and client, which protocol to speak) is bench/dropin.
package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// Config is one test against a perftest tool on the other end of
// a TCP connection.
type Config struct {
	Device         string
	Port, GIDIndex int       // GIDIndex < 0: rdmabench's choice
	Client         bool      // this side connected (perftest's client)
	Spec           spec.Spec // one size; Warmup is forced to 0 (perftest has none)
	// Sizes, for perftest's -a, are the message sizes in the order they run,
	// all on the same QPs and memory, which is sized for the largest
	// (Spec.Size is set to it); nil: Spec.Size only.
	Sizes []int
	// Peak computes perftest's BW peak on the bandwidth client
	// (result.Result.PerftestPeak; off with perftest's -N).
	Peak bool
	// Test is what this side negotiates with a perftest >= 6.28 (the
	// SYMMETRIC options); Size, Iters and NumQPs come from Spec, and
	// MaxQPRdAtom from the device.
	Test    wire.Test
	Timeout time.Duration // each exchange step; 0: wire.DefaultTimeout
	Run     measure.Options
	// Trace, when set, gets one line per step of the exchange.
	Trace io.Writer
	// Record, when set, gets every swap and what this side negotiated
	// (RDMABENCH_DROPIN_RECORD; the caller fills Tool and Args and writes it).
	Record *wire.Recording
}

// Outcome is what one side saw.
type Outcome struct {
	Start, End time.Time // the exchange's first step, the closing handshake
	Peer       wire.Version
	MTU        int // path MTU, bytes
	Env        result.Env
	Result     result.Result // the last size's
	// Results are one per size (-a), in order; the passive sides'
	// one result.
	Results []result.Result
	// Timed is false where this side times nothing (perftest's READ and
	// atomic servers are passive).
	Timed bool
	// Mismatches are the negotiated parameters that differ (peer >= 6.28).
	Mismatches []wire.Mismatch
}

// ErrPerftestUnsupported: the test asks for something the drop-in does not
// do against a perftest peer (the message names it and what is supported).
var ErrPerftestUnsupported = errors.New("not supported against a perftest peer")

// ErrNotPerftest: the server did not answer perftest's version exchange
// (an rdmabench server closes the connection instead); the drop-in client
// then speaks rdmabench's protocol.
var ErrNotPerftest = errors.New("the server is not perftest")

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Supports reports whether the drop-in can run s against a
// perftest tool, and why not.
func Supports(s spec.Spec) error {
	switch {
	case perftest.PeerQPType(s) != "": // UC: SEND, WRITE; UD: SEND; -R: RC (bench/perftest/peerqp.go)
		return fmt.Errorf("%w: %s", ErrPerftestUnsupported, perftest.PeerQPType(s))
	case s.Bidirectional && s.NumQPs() > 1:
		return fmt.Errorf("%w: -b with -q %d (-b on one QP)", ErrPerftestUnsupported, s.NumQPs())
	case s.Bidirectional && s.Duration > 0:
		return fmt.Errorf("%w: -b with -D (-b with -n)", ErrPerftestUnsupported)
	case s.NumQPs() > 1 && s.Mode == result.ModeLat:
		return fmt.Errorf("%w: -q %d in a latency test (one QP)", ErrPerftestUnsupported, s.NumQPs())
	case s.Verify:
		return fmt.Errorf("%w: --data_validation (perftest 6.29's swaps tail markers in its own records; rdmabench's check needs rdmabench at both ends)", ErrPerftestUnsupported)
	}
	return nil
}

// dropInEnvHook, when set (tests), is called on the side (client or
// not) that has just collected its environment.
var dropInEnvHook func(client bool)

// Run runs cfg.Spec against the perftest tool on nc, which the
// caller closes, in steps: the device, perftest's exchange up to the test's
// parameters (negotiate), the QPs and their records up to the barrier after
// RTR (connect), then each size's loop and the closing handshake (loop,
// dropinloop.go).
func Run(ctx context.Context, nc net.Conn, cfg Config) (*Outcome, error) {
	s, err := dropInSpec(cfg)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() }) // every exchange read ends at once
	defer stop()
	cc, _ := nc.(*PerftestCMConn) // -R: rdma_cm connects the QPs (dropincm.go)
	dev, err := dropInDevice(cfg, nc, cc, s)
	if err != nil {
		return nil, err
	}
	if cc == nil { // -R: the channel's device, which the channel closes
		defer dev.Close()
	}
	p := &dropInSide{cfg: cfg, s: s, nc: nc, dev: dev, cc: cc, wc: dropInWire(nc, cfg, cc != nil)}
	run := &Outcome{Start: time.Now(), Timed: timedSide(s, cfg.Client)}
	if err := p.negotiate(run); err != nil {
		return run, err
	}
	if p.eps, err = endpoint.NewTest(dev, p.s, cfg.Client); err != nil {
		return run, err
	}
	defer p.eps.Close()
	if err := p.connect(ctx, run); err != nil {
		return run, err
	}
	return p.loop(ctx, run)
}

// timedSide is whether a side of s (the client, or the server) times the
// run (Outcome.Timed): the client, and both sides of SEND, of
// ib_write_lat's ping-pong and of -b.
func timedSide(s spec.Spec, client bool) bool {
	return client || s.Op == result.OpSend || (s.Op == result.OpWrite && s.Mode == result.ModeLat) || s.Bidirectional
}

// dropInSpec is cfg.Spec as the drop-in runs it against perftest: no
// warm-up, no address stepping, and with -a the largest size (perftest
// registers its memory once for it too).
func dropInSpec(cfg Config) (spec.Spec, error) {
	s := cfg.Spec
	s.Warmup, s.WarmupTime, s.NoAddrStep = 0, 0, true
	for _, n := range cfg.Sizes {
		s.Size = max(s.Size, n)
	}
	return s, Supports(s)
}

// dropInDevice is the test's device: with -R the channel's (cc), else
// the one opened for nc's local address, which the caller closes.
func dropInDevice(cfg Config, nc net.Conn, cc *PerftestCMConn, s spec.Spec) (*device.Device, error) {
	switch {
	case s.RDMACM != (cc != nil):
		return nil, fmt.Errorf("%w: -R needs perftest's rdma_cm channel (DialPerftestCM, AcceptPerftestCM), and only -R has one", ErrPerftestUnsupported)
	case cc != nil:
		return cc.dev, nil
	}
	var local netip.Addr
	if ap, err := netip.ParseAddrPort(nc.LocalAddr().String()); err == nil {
		local = ap.Addr()
	}
	return device.Open(cfg.Device, cfg.Port, cfg.GIDIndex, local)
}

// dropInWire is perftest's exchange on nc (binary records over -R's
// channel), traced and recorded where cfg asks.
func dropInWire(nc net.Conn, cfg Config, binary bool) *wire.Conn {
	wc := &wire.Conn{C: nc, Client: cfg.Client, Timeout: cfg.Timeout, Binary: binary}
	if cfg.Trace != nil || cfg.Record != nil {
		wc.Trace = func(field string, sent, got []byte, err error) {
			if cfg.Trace != nil {
				fmt.Fprintf(cfg.Trace, "perftest exchange: %s: sent %q, got %q, err %v\n", field, bytes.TrimRight(sent, "\x00"), bytes.TrimRight(got, "\x00"), err)
			}
			if cfg.Record != nil {
				cfg.Record.Add(field, sent, got, err)
			}
		}
	}
	return wc
}

// negotiate collects this side's environment, then runs the exchange's
// first steps: versions, system data, the MTU and (perftest >= 6.28) the
// test's parameters; it sets run.Peer and run.MTU.
func (p *dropInSide) negotiate(run *Outcome) error {
	cfg, dev, wc := p.cfg, p.dev, p.wc
	// The environment (sysfs, the device doctor's tools, dpkg-query: about a
	// second under emulation) is collected now, before the first record
	// swap: after the barrier after RTR perftest's client is already
	// sending, and a receiver still collecting has no receives to repost
	// (RNR NAKs, each a 0.64 ms wait on the sender) and a passive server
	// takes the CPU from the client's loop.
	var err error
	if p.env, _, err = device.SideEnv(dev, p.nc.LocalAddr(), cfg.Run.CPU); err != nil {
		return err
	}
	if dropInEnvHook != nil {
		dropInEnvHook(cfg.Client)
	}
	if run.Peer, err = wc.Versions(wire.OurVersion); err != nil {
		if cfg.Client && !errors.Is(err, wire.ErrTooOld) && !isTimeout(err) {
			return fmt.Errorf("%w: %v", ErrNotPerftest, err)
		}
		return err
	}
	if _, err := wc.SysData(wire.SysData{CycleBuffer: int32(os.Getpagesize()), CacheLineSize: 64}); err != nil {
		return err
	}
	mtu := dev.Port.ActiveMTU
	if p.s.MTU != 0 {
		mtu = min(mtu, p.s.MTU)
	}
	enum, err := wc.MTU(wire.MTUEnum(mtu))
	if err != nil {
		return err
	}
	run.MTU, p.s.MTU = wire.MTUBytes(enum), wire.MTUBytes(enum)
	perftest.CutUDSize(&p.s, run.MTU) // UD: one packet, as perftest cuts it
	t := cfg.Test
	t.Size, t.Iters, t.NumQPs, t.MaxQPRdAtom = uint64(p.s.Size), uint64(p.s.Iters), p.s.NumQPs(), dev.Attr.MaxQPRdAtom
	if rec := cfg.Record; rec != nil {
		rec.Peer, rec.Client, rec.Binary, rec.Test = run.Peer.Raw, cfg.Client, p.cc != nil, t
	}
	if _, _, err := wc.Negotiate(t.Params()); err != nil {
		run.Mismatches = wire.Mismatches(err)
		return err
	}
	return nil
}

// connect connects the QPs in perftest 6.06's order of record swaps before
// the loop: every QP's (its QPs reach RTR after this first round), then
// (latency tools, ib_send_bw) QP 0's, every QP's again, and QP 0's as the
// barrier after RTR. With -R rdma_cm connects them first (dropincm.go).
func (p *dropInSide) connect(ctx context.Context, run *Outcome) error {
	dev, s := p.dev, p.s
	p.withGID = dev.Port.LinkLayer == "Ethernet" || dev.GIDGiven // perftest sends the GID whenever it has a GID index
	if p.cfg.Record != nil {
		p.cfg.Record.WithGID = p.withGID
	}
	p.qps = p.eps.Measured()
	if p.cc != nil {
		if err := connectPerftestCM(ctx, p.wc, p.cc, dev, p.eps, p.withGID); err != nil {
			return err
		}
	}
	p.mine = make([]wire.Dest, len(p.qps))
	for i, e := range p.qps {
		e.QKey = perftest.QKeyFor(s) // UD: perftest's Q_Key (RC and UC have none)
		in := e.Info()
		p.mine[i] = wire.Dest{LID: in.LID, OutReads: uint16(in.MaxRdAtomic), QPN: e.QP.QPN(), PSN: in.PSN, RKey: in.RKey, VAddr: in.Addr, GID: dev.GID.GID}
	}
	peers := make([]wire.Dest, len(p.qps))
	for i := range p.qps {
		var err error
		if peers[i], err = p.wc.Dest(p.mine[i], p.withGID, fmt.Sprintf("dest qp %d", i)); err != nil {
			return err
		}
	}
	if err := p.connectQPs(run.MTU, peers); err != nil {
		return err
	}
	return p.swapsAfterRTR()
}

// connectQPs takes this side's QPs to RTS towards the peer's records (with
// -R: rdma_cm's connections, started), and sets perftest's WRITE marker.
func (p *dropInSide) connectQPs(mtu int, peers []wire.Dest) error {
	dev, s := p.dev, p.s
	remote := func(d wire.Dest) proto.QPInfo {
		return proto.QPInfo{QPN: d.QPN, PSN: d.PSN, LID: d.LID, GID: verbs.GID(d.GID).String(), GIDType: dev.GID.Type.String(),
			LinkLayer: dev.Port.LinkLayer, ActiveMTU: mtu, MaxRdAtomic: int(max(d.OutReads, 1)), RKey: d.RKey, Addr: d.VAddr,
			Len: uint64(s.TargetLen()), QKey: perftest.QKeyFor(s)}
	}
	r := remote(peers[0])
	for _, d := range peers[1:] {
		r.QPs = append(r.QPs, remote(d))
	}
	var err error
	if p.cc != nil {
		err = p.eps.StartCM(r)
	} else {
		_, err = p.eps.Connect(r)
	}
	if err != nil {
		return err
	}
	for _, e := range p.qps {
		if s.Op == result.OpWrite {
			e.Eng.SetPerftestMarker()
		}
	}
	return nil
}

// swapsAfterRTR are the record swaps after the first round: QP 0's again
// (latency tools, ib_send_bw), every QP's, and the barrier after RTR.
func (p *dropInSide) swapsAfterRTR() error {
	wc, mine, withGID := p.wc, p.mine, p.withGID
	if p.s.Mode == result.ModeLat || p.s.Op == result.OpSend {
		if _, err := wc.Dest(mine[0], withGID, "dest qp 0 (again)"); err != nil {
			return err
		}
	}
	for i := range p.qps {
		if _, err := wc.Dest(mine[i], withGID, fmt.Sprintf("dest qp %d (second round)", i)); err != nil {
			return err
		}
	}
	_, err := wc.Dest(mine[0], withGID, "barrier after RTR")
	return err
}

func dropInConnSetup(dev *device.Device, eps *endpoint.Test, cc *PerftestCMConn) *result.ConnSetup {
	method := result.ConnExchange
	if cc != nil {
		method = result.ConnRDMACM
	}
	conn := eps.SetupOn(dev, method)
	if cc != nil { // the server's address: where it listens
		dst := cc.RemoteAddr().String()
		if eps.SetCMGID(conn, dev, "chosen by rdma_cm for "+dst) {
			conn.Address = dst
		}
	}
	return conn
}
