package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/spread"
)

// finishTest ends a test on the control connection: it reports a measuring
// error to the server (or the cause that aborted the test), or sends the
// end with the total iteration count and returns the server's result (from
// the watch w).
func (cl *Client) finishTest(w *kinds.Watch, ab *kinds.TestAbort, total int64, err error, totals ...int64) (proto.ServerResult, error) {
	if err != nil {
		cause := ab.Err(nil)
		if cause != nil {
			err = cause
		} else if cause = w.CauseWithin(ab, err, kinds.LostGrace); cause != nil {
			err = cause
		}
		var pl *kinds.PeerLostError
		if !errors.As(err, &pl) {
			cl.c.SendError(err)
		}
		if cause == nil {
			w.Wait(ctrl.HeartbeatTimeout) // the server answers with its error: in step for the next test
		}
		return proto.ServerResult{}, err
	}
	if err := cl.c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: total, Totals: totals}); err != nil {
		if c := w.CauseWithin(ab, err, kinds.LostGrace); c != nil {
			return proto.ServerResult{}, c
		}
		return proto.ServerResult{}, err
	}
	var sr proto.ServerResult
	if err := w.Next(proto.MsgResult, &sr, endpoint.EngineTimeout+15*time.Second); err != nil {
		return proto.ServerResult{}, err
	}
	if sr.Error != "" {
		return proto.ServerResult{}, fmt.Errorf("server: %s", sr.Error)
	}
	return sr, nil
}

// ClientConfig configures the client side of `rdmabench run` and `loopback`.
type ClientConfig struct {
	Device   string
	Port     int // 0: chosen with the device (device.Choose)
	GIDIndex int // -1: auto
	Run      measure.Options
	// Transport "tcp": the run has TCP tests only and opens no RDMA device.
	Transport string
	// RDMACM opens the device through librdmacm, as rdma_cm tests need; with
	// no Device, the device is the one rdma_cm reaches the server through.
	RDMACM bool
	// NUMA is where the engine threads and buffers go (Device.Place).
	NUMA device.NUMAChoice
	// AuthKey is the shared key to prove to the server (and that the server
	// must prove back); nil: none. See auth.go.
	AuthKey []byte
}

// Client is a connected control session.
type Client struct {
	c    ctrl.Chan // the control connection (*proto.Conn from Dial)
	dev  *device.Device
	peer string
	ack  proto.HelloAck
	// last is what the last RDMA test found out, for the run's environment.
	last lastTest
	// serverEnv is the server's environment from its hello-ack (nil from
	// an older server).
	serverEnv *result.Env
	// byeReport is the Bye's Report (SetByeReport); nil: an empty bye.
	byeReport []byte
}

// lastTest is what the client's last RDMA test found out about the path,
// for the run's environment (runAll).
type lastTest struct {
	// pathMTU is the path MTU of the last test that succeeded, bytes: the
	// minimum of both ports' active MTUs and --mtu.
	pathMTU int
	// inline is the largest inline size the device grants to the last
	// connected test's QP type (Device.MaxInline), bytes.
	inline int
	// conn is the connection setup of the last test that succeeded.
	conn *result.ConnSetup
}

// SetByeReport makes Close hand report (JSON) to the server in its bye,
// for the server's server.Config.OnBye.
func (cl *Client) SetByeReport(report []byte) { cl.byeReport = report }

// Dial connects to a server, retrying until timeout, and opens the device.
func Dial(ctx context.Context, addr string, cfg ClientConfig, timeout time.Duration) (*Client, error) {
	deadline := time.Now().Add(timeout)
	for delay := 50 * time.Millisecond; ; delay = min(delay*2, time.Second) {
		cl, err := dial(ctx, addr, cfg, deadline)
		var re *proto.RemoteError
		if !errors.As(err, &re) || (re.Code != admit.CodeBusy && re.Code != admit.CodeDropped) || time.Now().Add(delay).After(deadline) || ctx.Err() != nil {
			return cl, err
		}
		time.Sleep(delay) // the server is finishing another session, or made room for newer connections: try again
	}
}

// dial connects once (retrying refused connections until deadline) and
// shakes hands.
func dial(ctx context.Context, addr string, cfg ClientConfig, deadline time.Time) (*Client, error) {
	var nc net.Conn
	var err error
	for delay := 50 * time.Millisecond; ; delay = min(delay*2, time.Second) {
		d := net.Dialer{Timeout: time.Until(deadline)}
		nc, err = d.DialContext(ctx, "tcp", addr)
		if err == nil {
			break
		}
		if time.Now().Add(delay).After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("server %s not reachable: %w", addr, err)
		}
		time.Sleep(delay)
	}
	// The handshake first, then the device: the server gives a handshake
	// only a few seconds (handshakeTimeout), and opening a device may take
	// longer.
	c := proto.NewConn(nc, ctrl.MsgTimeout)
	host, _ := os.Hostname()
	cl := &Client{c: c, peer: addr}
	if cl.ack, err = auth.ClientHandshake(c, cfg.AuthKey, host, ctrl.MsgTimeout); err != nil {
		cl.Close()
		return nil, fmt.Errorf("handshake with %s: %w", addr, err)
	}
	if len(cl.ack.Env) > 0 {
		var env result.Env
		if err := json.Unmarshal(cl.ack.Env, &env); err != nil {
			cl.Close()
			return nil, fmt.Errorf("handshake with %s: server environment: %w", addr, err)
		}
		cl.serverEnv = &env
	}
	if cfg.Transport != result.TransportTCP {
		if cl.dev, err = openClientDevice(nc, cfg); err != nil {
			cl.Close()
			return nil, err
		}
	}
	return cl, nil
}

// openClientDevice opens the client's device for a control connection nc:
// by route from nc's local address, with --ib-dev, or (rdma_cm) the one
// rdma_cm reaches the server through.
func openClientDevice(nc net.Conn, cfg ClientConfig) (*device.Device, error) {
	var err error
	open, name, port, why := device.Open, cfg.Device, cfg.Port, "chosen with --ib-dev"
	if !cfg.RDMACM {
		name, port, why, err = device.Choose(cfg.Device, cfg.Port, admit.AddrOf(nc.LocalAddr()))
	} else {
		why = "chosen by rdma_cm for the server's address"
		if cfg.Device != "" {
			why = "chosen with --ib-dev"
		}
		open = device.OpenCM
		// the port is the CM ID's (port_num), not --ib-port; for a loopback
		// server this fails before the first test, as the server would
		cmName, cmPort, cerr := endpoint.ClientCMDevice(admit.AddrOf(nc.RemoteAddr()), name)
		if err = cerr; err == nil {
			var bound bool
			if name, port, bound = endpoint.CMBinding(name, port, cmName, cmPort); bound {
				why += fmt.Sprintf(", port %d as rdma_cm bound it", cmPort)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	dev, err := open(name, port, cfg.GIDIndex, admit.AddrOf(nc.LocalAddr()))
	if err != nil {
		return nil, err
	}
	dev.Reason = why
	dev.Place(cfg.NUMA)
	return dev, nil
}

// Device is the client's device.
func (cl *Client) Device() *device.Device { return cl.dev }

// Close says goodbye and releases everything.
func (cl *Client) Close() error {
	if cl.byeReport != nil {
		cl.c.Send(proto.MsgBye, proto.Bye{Report: cl.byeReport})
	} else {
		cl.c.Send(proto.MsgBye, nil)
	}
	err := cl.c.Close()
	if cl.dev != nil {
		err = errors.Join(err, cl.dev.Close())
	}
	return err
}

// Run runs one test against the server: its kind (kinds.Of) inside the
// shared lifecycle (connect, ready, watch and heartbeat, finish, verify).
// Cancelling ctx aborts the test in progress.
func (cl *Client) Run(ctx context.Context, spec spec.Spec, o measure.Options) (result.Result, error) {
	tcp := spec.Transport == result.TransportTCP
	if tcp {
		if err := kinds.CheckTCPSpec(spec); err != nil {
			return result.Result{}, err
		}
	} else {
		if cl.dev == nil {
			return result.Result{}, fmt.Errorf("%s: no RDMA device is open on this side", spec.Name())
		}
		o.NodeCPUs = cl.dev.NodeCPUs()
		if err := endpoint.Supports(cl.dev, spec); err != nil { // before the server allocates anything
			return result.Result{}, err
		}
	}
	// until the server's start, a cancelled run (a signal, --run-timeout)
	// closes the control connection: every setup wait ends at once
	stopSetup := context.AfterFunc(ctx, func() { cl.c.Close() })
	defer stopSetup()
	t := &kinds.ClientTest{Ctx: ctx, C: cl.c, Peer: cl.peer, Spec: spec}
	var setup rdmaSetup
	loops, release, err := cl.connect(ctx, t, &o, &setup) // loops: the test's C loops, for its abort
	defer release()
	if err != nil {
		return result.Result{}, err
	}
	var rd proto.Ready
	if err := cl.c.Recv(proto.MsgReady, &rd); err != nil {
		return result.Result{}, err
	}
	if !stopSetup() {
		return result.Result{}, context.Cause(ctx)
	}
	ab := kinds.NewTestAbort(loops...)
	defer ab.Disarm() // before the endpoints are closed (deferred earlier)
	w := kinds.WatchServer(cl.c, cl.peer, ab)
	defer context.AfterFunc(ctx, func() { ab.Abort(context.Cause(ctx)) })()
	if !tcp {
		defer cl.dev.OnEvent(ab.Abort)()
	}
	t.Opts, t.Watch, t.Abort = o, w, ab
	t.StopHeartbeat = kinds.Heartbeat(cl.c)
	m, err := kinds.Of(spec).Measure(t)
	t.StopHeartbeat()
	o.Timeline.Stop() // every mark before the end (bidirectional: its kind stopped it)
	sr := m.Served
	if sr == nil { // the end, and the server's result
		var got proto.ServerResult
		got, err = cl.finishTest(w, ab, m.Total, err, m.Totals...)
		sr = &got
	}
	if err != nil {
		return result.Result{}, err
	}
	if tcp {
		return m.Res, nil
	}
	res := m.Res
	if spec.Verify { // after the measured run: see verify.go
		if res.Verify, err = (kinds.VerifyPass{}).Measure(t); err != nil {
			return result.Result{}, err
		}
	}
	if err := cl.complete(&res, spec, o, *sr, m.Total, setup); err != nil {
		return result.Result{}, err
	}
	return res, nil
}

// connect connects the data plane of test t: its TCP connection, or its
// RDMA endpoints (setupRDMA, which fills o's timeline and setup). It
// returns the test's C loops and what releases the data plane (also after
// an error, once anything exists).
func (cl *Client) connect(ctx context.Context, t *kinds.ClientTest, o *measure.Options, setup *rdmaSetup) ([]kinds.Loop, func(), error) {
	if t.Spec.Transport == result.TransportTCP {
		d, err := kinds.ConnectTCP(ctx, cl.c, t.Spec)
		if err != nil {
			return nil, func() {}, err
		}
		t.TCP = d
		return []kinds.Loop{d.Eng}, func() { d.Close() }, nil
	}
	eps, err := cl.setupRDMA(t.Spec, o, setup)
	if err != nil {
		return nil, func() {
			if eps != nil {
				eps.Close()
			}
		}, err
	}
	t.EPs = eps
	var loops []kinds.Loop
	for _, e := range append(eps.Measured(), eps.Loads...) {
		loops = append(loops, e.Eng)
	}
	tl := o.Timeline
	return loops, func() {
		tl.Stop() // before the endpoints close
		eps.Close()
	}, nil
}

// rdmaSetup is what the client's setup of an RDMA test found out, for its
// result.
type rdmaSetup struct {
	mtu      int // the path MTU, bytes
	conn     *result.ConnSetup
	counters *device.CounterSnapshot // before any traffic
}

// setupRDMA connects the test's endpoints (by exchange or rdma_cm), probes
// the inline size and starts the counter timeline (o.timeline) before the
// server's start. It returns the endpoints also on an error, to be closed.
func (cl *Client) setupRDMA(spec spec.Spec, o *measure.Options, setup *rdmaSetup) (*endpoint.Test, error) {
	connect := cl.connectExchange
	if spec.RDMACM {
		connect = cl.connectCM
	}
	eps, mtu, conn, err := connect(spec)
	if err != nil {
		return eps, err
	}
	setup.mtu, setup.conn = mtu, conn
	cl.last.inline = eps.Probe.QP.Caps().MaxInlineData
	if t, err := device.QPType(spec); err == nil {
		if probe, err := cl.dev.MaxInline(t); err == nil {
			cl.last.inline = probe // what the device grants, not what this test asked for
		}
	}
	setup.counters = device.SnapshotCounters(cl.dev) // before the server's start: before any traffic
	// each interval's counters, both sides (bench/timeline)
	if measure.TimelineWanted(spec, *o) {
		var marks ctrl.Chan // nil: the server takes no marks
		if cl.ack.IntervalCounters {
			marks = cl.c
		}
		o.Timeline = device.StartTimeline(cl.dev, marks)
	}
	return eps, nil
}

// complete fills the fields every RDMA kind's result shares from the
// server's result sr, the client's total and the setup; it writes the
// .hlog and remembers the test's path MTU and connection (runAll's env).
func (cl *Client) complete(res *result.Result, spec spec.Spec, o measure.Options, sr proto.ServerResult, total int64, setup rdmaSetup) error {
	if res.CPU != nil {
		res.CPU.ServerUserNS, res.CPU.ServerSysNS = sr.CPUUserNS, sr.CPUSysNS
		res.CPU.ServerUSPerMsg = measure.PerMsgUS(sr.CPUUserNS+sr.CPUSysNS, res.Iterations)
	}
	if g := cl.dev.Port.DataGbps; g > 0 { // the data rate: after line encoding
		if spec.Bidirectional {
			g *= 2 // both directions of the link
		}
		res.LinkUtilization = res.Bandwidth.GbitPerSec / g
	}
	if spec.Unreliable() && spec.Traits().ConsumesRecv && spec.Mode == result.ModeBW && sr.Iterations < total {
		res.LostMessages = total - sr.Iterations
	}
	cl.last.pathMTU = setup.mtu
	res.Connection = setup.conn
	res.Counters = setup.counters.TestCounters(sr.Counters)
	o.Timeline.Attach(res.Intervals, sr.IntervalCounters)
	if err := o.Timeline.WriteHLog(o.HLog, res.Intervals); err != nil {
		return fmt.Errorf("write .hlog: %w", err)
	}
	cl.last.conn = setup.conn
	return nil
}

// connectExchange connects the test's QPs by exchanging QP numbers and
// PSNs with the server on the control connection (endpoint.DialExchange).
// It returns the endpoints (also on error, to be closed), the path MTU and
// the connection setup.
func (cl *Client) connectExchange(spec spec.Spec) (*endpoint.Test, int, *result.ConnSetup, error) {
	far := !device.IsLocalAddr(admit.AddrOf(cl.c.RemoteAddr()))
	swapped := false // the server has our QPs and waits for our answer
	eps, mtu, conn, err := endpoint.DialExchange(cl.dev, spec, far, func(mine proto.QPInfo) (proto.QPInfo, error) {
		var remote proto.QPInfo
		if err := cl.c.Send(proto.MsgTest, spec); err != nil {
			return remote, err
		}
		if err := cl.c.Send(proto.MsgQPInfo, mine); err != nil {
			return remote, err
		}
		err := cl.c.RecvTimeout(proto.MsgQPInfo, &remote, spread.Wait(cl.c.Timeout(), spec))
		swapped = err == nil
		return remote, err
	})
	if err != nil && swapped {
		cl.c.SendError(err)
	}
	return eps, mtu, conn, err
}

// connectCM is the client side of an rdma_cm connection: the server says
// where it listens, the client connects each QP there, then sends its
// buffers (endpoint.DialCM).
func (cl *Client) connectCM(spec spec.Spec) (*endpoint.Test, int, *result.ConnSetup, error) {
	if !cl.dev.Ctx.CM() {
		return nil, 0, nil, errors.New("--rdma-cm test on a client opened without rdma_cm (ClientConfig.RDMACM)")
	}
	if err := cl.c.Send(proto.MsgTest, spec); err != nil {
		return nil, 0, nil, err
	}
	var remote proto.QPInfo
	if err := cl.c.RecvTimeout(proto.MsgQPInfo, &remote, spread.Wait(cl.c.Timeout(), spec)); err != nil {
		return nil, 0, nil, err
	}
	waits := true // the server waits for our buffers or our error
	eps, mtu, conn, err := endpoint.DialCM(cl.dev, spec, remote, func(mine proto.QPInfo) error {
		err := cl.c.Send(proto.MsgQPInfo, mine)
		waits = err == nil
		return err
	})
	if err != nil && waits {
		cl.c.SendError(err)
	}
	return eps, mtu, conn, err
}
