// Package testutil holds helpers shared by rdmabench's tests: the RDMA skip
// rule and a connected pair of queue pairs on one device.
package testutil

import (
	"errors"
	"net/netip"
	"os"
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// RequireEnv is the variable that turns "no RDMA device" skips into failures.
// The SoftRoCE VM stage sets it, so a test that did not run cannot pass there.
const RequireEnv = "RDMABENCH_REQUIRE_RDMA"

// DeviceEnv names the device tests use (default: the first one).
const DeviceEnv = "RDMABENCH_DEVICE"

// Required reports whether RDMABENCH_REQUIRE_RDMA=1.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// RequireRDMA opens the test device. Where there is no RDMA device it skips
// with the reason, or fails when RDMABENCH_REQUIRE_RDMA=1. The context is
// closed when the test ends.
func RequireRDMA(tb testing.TB) *verbs.Context {
	tb.Helper()
	ctx, err := verbs.Open(os.Getenv(DeviceEnv))
	if err != nil {
		if errors.Is(err, verbs.ErrNoKernelSupport) || errors.Is(err, verbs.ErrNoDevices) || errors.Is(err, verbs.ErrNoProvider) {
			if Required() {
				tb.Fatalf("%s=1 but no RDMA device: %v", RequireEnv, err)
			}
			tb.Skipf("no RDMA device: %v", err)
		}
		tb.Fatalf("open RDMA device: %v", err)
	}
	CloseAtEnd(tb, ctx.Name()+" (leak?)", ctx)
	return ctx
}

// CloseAtEnd closes c when the test ends and reports a failed Close (an
// object left open, i.e. a leak) as a test error naming what.
func CloseAtEnd(tb testing.TB, what string, c interface{ Close() error }) {
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("close %s: %v", what, err)
		}
	})
}

// Port is the port tests use.
const Port = 1

// GIDIndex picks the test GID as the benchmark does by default (the RoCE v2
// IPv4-mapped GID on rxe over lo, index 1).
func GIDIndex(tb testing.TB, ctx *verbs.Context) verbs.GIDEntry {
	tb.Helper()
	tbl, err := ctx.GIDTable(Port)
	if err != nil {
		tb.Fatalf("GID table: %v", err)
	}
	g, _, ok := verbs.BestGID(tbl, netip.MustParseAddr("127.0.0.1"))
	if !ok {
		tb.Fatalf("%s port %d has no GIDs", ctx.Name(), Port)
	}
	return g
}

// Side is one end of a test connection: its own PD, CQs, buffer, MR and QP.
type Side struct {
	PD     *verbs.PD
	SendCQ *verbs.CQ
	RecvCQ *verbs.CQ
	Buf    *verbs.Buffer
	MR     *verbs.MR
	QP     *verbs.QP
	// Peer is where this side's UD sends go (UD pairs only).
	Peer verbs.UDDest
}

// PairConfig describes a test connection.
type PairConfig struct {
	BufSize int
	Access  verbs.Access // MR and QP remote access of both sides
	Depth   int          // send and receive queue depth
	Inline  int
	Channel bool         // receive CQs get a completion channel
	Type    verbs.QPType // RC (the zero value is RC), UC or UD
}

// NewPair creates two QPs of cfg.Type (default RC) on ctx connected to each
// other; UD sides get an address handle to each other in Side.Peer.
// Everything is closed in reverse order when the test ends.
func NewPair(tb testing.TB, ctx *verbs.Context, cfg PairConfig) (a, b *Side) {
	tb.Helper()
	if cfg.Depth == 0 {
		cfg.Depth = 16
	}
	if cfg.Type == 0 {
		cfg.Type = verbs.QPTypeRC
	}
	gid := GIDIndex(tb, ctx)
	port, err := ctx.QueryPort(Port)
	if err != nil {
		tb.Fatal(err)
	}
	a, b = newSide(tb, ctx, cfg), newSide(tb, ctx, cfg)
	for _, p := range [][2]*Side{{a, b}, {b, a}} {
		local, remote := p[0], p[1]
		if err := local.QP.ToInit(Port, cfg.Access); err != nil {
			tb.Fatal(err)
		}
		if cfg.Type == verbs.QPTypeUD {
			ah, err := local.PD.CreateAH(verbs.AHAttr{Port: Port, UseGRH: true, DGID: gid.GID, SGIDIndex: gid.Index})
			if err != nil {
				tb.Fatal(err)
			}
			CloseAtEnd(tb, "ah", ah)
			local.Peer = verbs.UDDest{AH: ah, QPN: remote.QP.QPN(), QKey: verbs.DefaultQKey}
		}
		if err := local.QP.ToRTR(verbs.RTRAttr{Port: Port, PathMTU: port.ActiveMTU, DestQPN: remote.QP.QPN(), RQPSN: 0x100,
			UseGRH: true, DGID: gid.GID, SGIDIndex: gid.Index, MaxDestRdAtomic: 1}); err != nil {
			tb.Fatal(err)
		}
		if err := local.QP.ToRTS(verbs.RTSAttr{SQPSN: 0x100, MaxRdAtomic: 1, Timeout: 14, RetryCnt: 7}); err != nil {
			tb.Fatal(err)
		}
	}
	return a, b
}

func newSide(tb testing.TB, ctx *verbs.Context, cfg PairConfig) *Side {
	tb.Helper()
	s := &Side{}
	var err error
	closeLater := func(c interface{ Close() error }, what string) { CloseAtEnd(tb, what, c) }
	if s.PD, err = ctx.AllocPD(); err != nil {
		tb.Fatal(err)
	}
	closeLater(s.PD, "pd")
	if s.SendCQ, err = ctx.CreateCQ(cfg.Depth*2, false); err != nil {
		tb.Fatal(err)
	}
	closeLater(s.SendCQ, "send cq")
	if s.RecvCQ, err = ctx.CreateCQ(cfg.Depth*2, cfg.Channel); err != nil {
		tb.Fatal(err)
	}
	closeLater(s.RecvCQ, "recv cq")
	if s.Buf, err = verbs.AllocBuffer(cfg.BufSize, false); err != nil {
		tb.Fatal(err)
	}
	closeLater(s.Buf, "buffer")
	if s.MR, err = s.PD.RegisterMR(s.Buf, 0, s.Buf.Len(), verbs.AccessLocalWrite|cfg.Access); err != nil {
		tb.Fatal(err)
	}
	closeLater(s.MR, "mr")
	if s.QP, err = s.PD.CreateQP(verbs.QPConfig{Type: cfg.Type, SendCQ: s.SendCQ, RecvCQ: s.RecvCQ,
		Caps: verbs.QPCaps{MaxSendWR: cfg.Depth, MaxRecvWR: cfg.Depth, MaxInlineData: cfg.Inline}}); err != nil {
		tb.Fatal(err)
	}
	closeLater(s.QP, "qp")
	return s
}

// RequireIWARP returns the name of an iWARP device (siw in the test bed), or
// skips the test when there is none, and fails it instead under
// RDMABENCH_REQUIRE_RDMA=1: the guest suite must run on iWARP too.
func RequireIWARP(tb testing.TB) string {
	tb.Helper()
	RequireRDMA(tb)
	names, err := verbs.DeviceNames()
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range names {
		ctx, err := verbs.Open(n)
		if err != nil {
			continue
		}
		iw := ctx.IsIWARP()
		ctx.Close()
		if iw {
			return n
		}
	}
	if Required() {
		tb.Fatalf("%s=1 but no iWARP device among %v (boot the guest with siw: vmexec --siw require)", RequireEnv, names)
	}
	tb.Skipf("no iWARP device among %v", names)
	return ""
}
