package bench

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

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The drop-in facing a real perftest tool (docs/perftest.md, "Facing
// perftest"): perftest's out-of-band exchange (bench/perftest/wire) on the
// TCP connection, rdmabench's endpoints and C loops on the QP, run the way
// perftest's peer expects them.

// PerftestConfig is one test against a perftest tool on the other end of
// a TCP connection.
type PerftestConfig struct {
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
	Run     RunOptions
	// Trace, when set, gets one line per step of the exchange.
	Trace io.Writer
	// Record, when set, gets every swap and what this side negotiated
	// (RDMABENCH_DROPIN_RECORD; the caller fills Tool and Args and writes it).
	Record *wire.Recording
}

// PerftestRun is what one side saw.
type PerftestRun struct {
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

// PerftestSupported reports whether the drop-in can run s against a
// perftest tool, and why not.
func PerftestSupported(s spec.Spec) error {
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

// perftestEnvHook, when set (tests), is called on the side (client or
// not) that has just collected its environment.
var perftestEnvHook func(client bool)

// RunPerftest runs cfg.Spec against the perftest tool on nc, which the
// caller closes.
func RunPerftest(ctx context.Context, nc net.Conn, cfg PerftestConfig) (*PerftestRun, error) {
	s := cfg.Spec
	s.Warmup, s.WarmupTime, s.NoAddrStep = 0, 0, true
	for _, n := range cfg.Sizes { // -a: the memory is registered once, for the largest size (perftest's too)
		s.Size = max(s.Size, n)
	}
	if err := PerftestSupported(s); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() }) // every exchange read ends at once
	defer stop()
	var local netip.Addr
	if ap, err := netip.ParseAddrPort(nc.LocalAddr().String()); err == nil {
		local = ap.Addr()
	}
	var dev *Device
	var err error
	cc, _ := nc.(*PerftestCMConn) // -R: rdma_cm connects the QPs (perftestcm.go)
	switch {
	case s.RDMACM != (cc != nil):
		return nil, fmt.Errorf("%w: -R needs perftest's rdma_cm channel (DialPerftestCM, AcceptPerftestCM), and only -R has one", ErrPerftestUnsupported)
	case cc != nil: // -R: the channel's device (it closes it)
		dev = cc.dev
	default:
		if dev, err = OpenDevice(cfg.Device, cfg.Port, cfg.GIDIndex, local); err != nil {
			return nil, err
		}
		defer dev.Close()
	}
	wc := &wire.Conn{C: nc, Client: cfg.Client, Timeout: cfg.Timeout, Binary: cc != nil}
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
	run := &PerftestRun{Start: time.Now(), Timed: cfg.Client || s.Op == result.OpSend || (s.Op == result.OpWrite && s.Mode == result.ModeLat) || s.Bidirectional}
	// The environment (sysfs, the device doctor's tools, dpkg-query: about a
	// second under emulation) is collected now, before the first record
	// swap: after the barrier after RTR perftest's client is already
	// sending, and a receiver still collecting has no receives to repost
	// (RNR NAKs, each a 0.64 ms wait on the sender) and a passive server
	// takes the CPU from the client's loop.
	env, _, err := sideEnv(dev, nc.LocalAddr(), cfg.Run.CPU)
	if err != nil {
		return run, err
	}
	if perftestEnvHook != nil {
		perftestEnvHook(cfg.Client)
	}
	if run.Peer, err = wc.Versions(wire.OurVersion); err != nil {
		if cfg.Client && !errors.Is(err, wire.ErrTooOld) && !isTimeout(err) {
			return run, fmt.Errorf("%w: %v", ErrNotPerftest, err)
		}
		return run, err
	}
	if _, err := wc.SysData(wire.SysData{CycleBuffer: int32(os.Getpagesize()), CacheLineSize: 64}); err != nil {
		return run, err
	}
	mtu := dev.Port.ActiveMTU
	if s.MTU != 0 {
		mtu = min(mtu, s.MTU)
	}
	enum, err := wc.MTU(wire.MTUEnum(mtu))
	if err != nil {
		return run, err
	}
	run.MTU, s.MTU = wire.MTUBytes(enum), wire.MTUBytes(enum)
	perftest.CutUDSize(&s, run.MTU) // UD: one packet, as perftest cuts it
	t := cfg.Test
	t.Size, t.Iters, t.NumQPs, t.MaxQPRdAtom = uint64(s.Size), uint64(s.Iters), s.NumQPs(), dev.Attr.MaxQPRdAtom
	if rec := cfg.Record; rec != nil {
		rec.Peer, rec.Client, rec.Binary, rec.Test = run.Peer.Raw, cfg.Client, cc != nil, t
	}
	if _, _, err := wc.Negotiate(t.Params(), wire.LegacyLen); err != nil {
		run.Mismatches = wire.Mismatches(err)
		return run, err
	}
	eps, err := newTestEndpoints(dev, s, cfg.Client)
	if err != nil {
		return run, err
	}
	defer eps.close()
	withGID := dev.Port.LinkLayer == "Ethernet" || dev.GIDGiven // perftest sends the GID whenever it has a GID index
	if cfg.Record != nil {
		cfg.Record.WithGID = withGID
	}
	qps := eps.measured()
	if cc != nil {
		if err := connectPerftestCM(ctx, wc, cc, dev, eps, withGID); err != nil {
			return run, err
		}
	}
	mine := make([]wire.Dest, len(qps))
	for i, e := range qps {
		e.qkey = perftest.QKeyFor(s) // UD: perftest's Q_Key (RC and UC have none)
		in := e.info()
		mine[i] = wire.Dest{LID: in.LID, OutReads: uint16(in.MaxRdAtomic), QPN: e.qp.QPN(), PSN: in.PSN, RKey: in.RKey, VAddr: in.Addr, GID: dev.GID.GID}
	}
	// perftest 6.06's order of record swaps before the loop: every QP's, then (latency tools, ib_send_bw)
	// QP 0's, every QP's again, and QP 0's as the barrier after RTR; its QPs reach RTR after the first round
	peers := make([]wire.Dest, len(qps))
	for i := range qps {
		if peers[i], err = wc.Dest(mine[i], withGID, fmt.Sprintf("dest qp %d", i)); err != nil {
			return run, err
		}
	}
	remote := func(d wire.Dest) proto.QPInfo {
		return proto.QPInfo{QPN: d.QPN, PSN: d.PSN, LID: d.LID, GID: verbs.GID(d.GID).String(), GIDType: dev.GID.Type.String(),
			LinkLayer: dev.Port.LinkLayer, ActiveMTU: run.MTU, MaxRdAtomic: int(max(d.OutReads, 1)), RKey: d.RKey, Addr: d.VAddr,
			Len: uint64(s.TargetLen()), QKey: perftest.QKeyFor(s)}
	}
	r := remote(peers[0])
	for _, d := range peers[1:] {
		r.QPs = append(r.QPs, remote(d))
	}
	if cc != nil {
		err = eps.startCM(r)
	} else {
		_, err = eps.connect(r)
	}
	if err != nil {
		return run, err
	}
	for _, e := range qps {
		if s.Op == result.OpWrite {
			e.eng.SetPerftestMarker()
		}
	}
	extra := s.Mode == result.ModeLat || s.Op == result.OpSend
	if extra {
		if _, err := wc.Dest(mine[0], withGID, "dest qp 0 (again)"); err != nil {
			return run, err
		}
	}
	for i := range qps {
		if _, err := wc.Dest(mine[i], withGID, fmt.Sprintf("dest qp %d (second round)", i)); err != nil {
			return run, err
		}
	}
	if _, err := wc.Dest(mine[0], withGID, "barrier after RTR"); err != nil {
		return run, err
	}
	return perftestLoop(ctx, run, perftestSide{cfg: cfg, s: s, wc: wc, nc: nc, dev: dev, eps: eps, qps: qps, mine: mine, withGID: withGID, cc: cc, env: env})
}

func perftestConnSetup(dev *Device, eps *testEndpoints, cc *PerftestCMConn) *result.ConnSetup {
	method := result.ConnExchange
	if cc != nil {
		method = result.ConnRDMACM
	}
	conn := newConnSetup(method, eps.all())
	conn.Device = dev.Ctx.Name()
	conn.GIDIndex, conn.GID, conn.GIDType, conn.GIDReason = dev.GID.Index, dev.GID.GID.String(), dev.GID.Type.String(), dev.GIDReason
	if path, err := eps.probe.qp.Path(); cc != nil && err == nil { // the server's address: where it listens
		dst := cc.RemoteAddr().String()
		conn.Address = dst
		if g, err := dev.Ctx.GID(path.Port, path.SGIDIndex); err == nil {
			conn.GIDIndex, conn.GID, conn.GIDType, conn.GIDReason = g.Index, g.GID.String(), g.Type.String(), "chosen by rdma_cm for "+dst
		}
	}
	return conn
}
