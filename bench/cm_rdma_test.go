package bench

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// checkConn checks a result's connection setup: method, QP count, one
// positive setup time per QP, max and p50 consistent (p50 n/a below 2 QPs).
func checkConn(t *testing.T, r result.Result, method string, qps int) {
	t.Helper()
	c := r.Connection
	if c == nil {
		t.Fatalf("%s %s %dB: no connection in the result", r.Op, r.Mode, r.SizeBytes)
	}
	if c.Method != method || c.QPs != qps || len(c.SetupNS) != qps {
		t.Fatalf("%s %s: connection %s with %d QPs (%d times), want %s with %d", r.Op, r.Mode, c.Method, c.QPs, len(c.SetupNS), method, qps)
	}
	for i, ns := range c.SetupNS {
		if ns <= 0 || ns > c.MaxNS {
			t.Errorf("%s %s: QP %d setup %d ns (max %d)", r.Op, r.Mode, i, ns, c.MaxNS)
		}
	}
	if c.P50NS.OK != (qps >= 2) || (c.P50NS.OK && (c.P50NS.NS <= 0 || c.P50NS.NS > c.MaxNS)) {
		t.Errorf("%s %s: setup p50 %v with %d QPs, max %d", r.Op, r.Mode, c.P50NS, qps, c.MaxNS)
	}
	if c.Device == "" || c.GID == "" || c.GIDReason == "" {
		t.Errorf("%s %s: connection lacks device, GID or reason: %+v", r.Op, r.Mode, c)
	}
	t.Logf("%s %s %dB: %s, %d QPs, setup p50 %v max %.2f ms, %s GID %d (%s)", r.Op, r.Mode, r.SizeBytes, c.Method, c.QPs,
		c.P50NS, float64(c.MaxNS)/1e6, c.Device, c.GIDIndex, c.GIDReason)
}

// TestRDMACMLoopback runs tests whose QPs rdma_cm creates and connects:
// 8 QPs on 2 threads, 64 QPs on 4, every latency op, and latency under load (load QPs
// connect through rdma_cm too).
func TestRDMACMLoopback(t *testing.T) {
	addr, cmctx := testutil.CMAddress(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{65536}, Template: spec.Spec{Iters: 400, QPs: 8, Threads: 2, RDMACM: true}})
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 6400, QPs: 64, Threads: 4, RDMACM: true}})...)
	specs = append(specs, plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite, result.OpRead, result.OpFetchAdd}, Modes: []string{result.ModeLat}, Sizes: []int{8}, Template: spec.Spec{Iters: 500, Warmup: 20, RDMACM: true}})...)
	loaded := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Sizes: []int{2}, Template: spec.Spec{Iters: 200, RDMACM: true, Load: &spec.Load{QPs: 2, Op: result.OpWrite, Size: 65536, TxDepth: 32, CQMod: 1}}})
	specs = append(specs, loaded...)
	cfg := runCfg(specs)
	cfg.Client.RDMACM = true
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	if back.Env.Device != cmctx.Name() || !strings.Contains(back.Env.GIDReason, "rdma_cm") {
		t.Errorf("environment: device %s, GID reason %q; want %s chosen by rdma_cm", back.Env.Device, back.Env.GIDReason, cmctx.Name())
	}
	for i, r := range back.Results {
		qps := specs[i].NumQPs()
		if specs[i].Load != nil {
			qps += specs[i].Load.QPs
		}
		checkConn(t, r, result.ConnRDMACM, qps)
		if c := r.Connection; c.Device != cmctx.Name() || !strings.HasPrefix(c.Address, addr.String()+":") {
			t.Errorf("%s %s: rdma_cm on %s at %s, want %s at %s", r.Op, r.Mode, c.Device, c.Address, cmctx.Name(), addr)
		}
	}
	if r := back.Results[0]; len(r.PerQP) != 8 || r.Bandwidth.MBPerSec <= 0 {
		t.Errorf("8-QP rdma_cm write bw: %d per-QP results, %.1f MB/s", len(r.PerQP), r.Bandwidth.MBPerSec)
	}
}

// TestRDMAExchangeSetupTime: without rdma_cm the setup time covers the QP
// number exchange, per QP.
func TestRDMAExchangeSetupTime(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{4096}, Template: spec.Spec{Iters: 2000, QPs: 4, Threads: 2}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	checkConn(t, back.Results[0], result.ConnExchange, 4)
	if c := back.Results[0].Connection; c.Address != "" || !strings.HasPrefix(c.GIDReason, "auto") {
		t.Errorf("exchange: address %q, GID reason %q", c.Address, c.GIDReason)
	}
}

// TestRDMACMLoopbackOnlyDevice: a device whose only addresses are loopback
// cannot serve rdma_cm; the run fails before any test, naming why.
func TestRDMACMLoopbackOnlyDevice(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	if _, _, _, err := endpoint.CMAddress(ctx.Name(), netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Skipf("%s has a non-loopback address", ctx.Name())
	}
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Template: spec.Spec{Iters: 100, RDMACM: true}})
	cfg := runCfg(specs)
	cfg.Client.RDMACM, cfg.Client.Device = true, ctx.Name()
	_, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err == nil || !strings.Contains(err.Error(), "cannot resolve the loopback address 127.0.0.1") || !strings.Contains(err.Error(), ctx.Name()) {
		t.Fatalf("rdma_cm on %s: %v, want the loopback explanation", ctx.Name(), err)
	}
}

// startCMTest opens a control session by hand and starts an rdma_cm test;
// it returns the connection and where the server listens.
func startCMTest(t *testing.T, addr string, sp spec.Spec) (*proto.Conn, netip.AddrPort) {
	t.Helper()
	c, info := startCMTestInfo(t, addr, sp)
	ip, err := netip.ParseAddr(info.CMAddr)
	if err != nil || info.CMPort == 0 || info.QPN != 0 {
		t.Fatalf("server's rdma_cm info: addr %q port %d qpn %d", info.CMAddr, info.CMPort, info.QPN)
	}
	return c, netip.AddrPortFrom(ip, uint16(info.CMPort))
}

// startCMTestInfo is startCMTest returning the server's whole QP info.
func startCMTestInfo(t *testing.T, addr string, sp spec.Spec) (*proto.Conn, proto.QPInfo) {
	t.Helper()
	var c *proto.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c = proto.NewConn(nc, ctrl.MsgTimeout)
		var ack proto.HelloAck
		if err := c.Send(proto.MsgHello, proto.Hello{Version: proto.Version, Tool: "test"}); err != nil {
			t.Fatal(err)
		}
		err = c.Recv(proto.MsgHelloAck, &ack)
		if err == nil {
			break
		}
		c.Close()
		// the server may still be ending the previous session: it answers busy
		var re *proto.RemoteError
		if !errors.As(err, &re) || re.Code != admit.CodeBusy || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	if err := c.Send(proto.MsgTest, sp); err != nil {
		t.Fatal(err)
	}
	var info proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &info); err != nil {
		t.Fatal(err)
	}
	return c, info
}

// TestRDMACMServerSurvivesBadClients: a client that vanishes while the
// server waits for its rdma_cm connections, and one that sends a connect
// request that is not rdmabench's, end their own tests only.
func TestRDMACMServerSurvivesBadClients(t *testing.T) {
	_, cmctx := testutil.CMAddress(t)
	addr := startServer(t)
	sp := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200, RDMACM: true}})[0]

	// 1: gone after the server's QP info
	c, _ := startCMTest(t, addr, sp)
	c.Close()

	// 2: a connect request with foreign private data is rejected
	c, dst := startCMTest(t, addr, sp)
	ch, err := verbs.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	id, err := ch.CreateID()
	if err != nil {
		t.Fatal(err)
	}
	if err := id.Resolve(netip.Addr{}, dst, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	pd, err := cmctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := cmctx.CreateCQ(4, false)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := id.CreateQP(pd, verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1}})
	if err != nil {
		t.Fatal(err)
	}
	err = id.Connect(verbs.ConnParam{PrivateData: []byte("not rdmabench")}, time.Now().Add(5*time.Second))
	var ee *verbs.EventError
	if !errors.As(err, &ee) || ee.Got != verbs.CMEventRejected {
		t.Errorf("foreign connect request: %v, want REJECTED", err)
	}
	c.SendError(errors.New("test client gives up"))
	c.Close()
	for _, cl := range []interface{ Close() error }{qp, id, ch, cq, pd} {
		if err := cl.Close(); err != nil {
			t.Errorf("close %T: %v", cl, err)
		}
	}

	// the next client is served
	cfg := runCfg([]spec.Spec{sp})
	cfg.Client.RDMACM = true
	start := time.Now()
	doc, err := RunClient(context.Background(), addr, cfg)
	if err != nil {
		t.Fatalf("client after the bad ones: %v", err)
	}
	checkDoc(t, doc, []spec.Spec{sp})
	t.Logf("next client served after %v", time.Since(start).Round(time.Millisecond))
}
