package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/verbs"
)

// Timeouts of the control connection.
var (
	ctrlTimeout      = 10 * time.Second // one control message
	heartbeatEvery   = time.Second      // client heartbeat while a test runs
	heartbeatTimeout = 15 * time.Second // server gives up on a silent client
	sessionIdle      = 10 * time.Minute // server closes an idle session
)

// ServerConfig configures `rdmabench server`.
type ServerConfig struct {
	Device   string
	Port     int // RDMA port
	GIDIndex int // -1: auto per connection
	Log      *log.Logger
	CPUs     []int // pin the responder thread to CPUs[0]; nil: no pinning
}

// Server answers clients one at a time, for as long as it runs. A client
// that fails or disappears ends only its own session.
type Server struct {
	cfg  ServerConfig
	dev  *Device
	busy sync.Mutex
	log  *log.Logger
	// cmDevs are librdmacm's contexts of the devices rdma_cm tests ran on,
	// by name (used under busy: one session at a time).
	cmDevs map[string]*Device
}

// NewServer opens the device and checks the port. Close it when done.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	dev, err := OpenDevice(cfg.Device, cfg.Port, -2, netip.Addr{})
	if err != nil {
		if !noRDMADevice(err) {
			return nil, err
		}
		cfg.Log.Printf("%v: serving TCP tests only", err)
		dev = nil
	}
	return &Server{cfg: cfg, dev: dev, log: cfg.Log}, nil
}

// Close closes the devices.
func (s *Server) Close() error {
	var errs []error
	for _, d := range s.cmDevs {
		errs = append(errs, d.Close())
	}
	if s.dev != nil {
		errs = append(errs, s.dev.Close())
	}
	return errors.Join(errs...)
}

// cmDevice is librdmacm's context of the named device, opened on first use.
func (s *Server) cmDevice(name string) (*Device, error) {
	if d := s.cmDevs[name]; d != nil {
		return d, nil
	}
	d, err := OpenDeviceCM(name, s.cfg.Port, -2, netip.Addr{})
	if err != nil {
		return nil, err
	}
	if s.cmDevs == nil {
		s.cmDevs = map[string]*Device{}
	}
	s.cmDevs[name] = d
	return d, nil
}

// Serve accepts control connections until ctx ends or the listener fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.session(c)
		}()
	}
}

func (s *Server) session(nc net.Conn) {
	c := proto.NewConn(nc, ctrlTimeout)
	defer c.Close()
	peer := c.RemoteAddr().String()
	var h proto.Hello
	if err := c.Recv(proto.MsgHello, &h); err != nil {
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	if h.Version != proto.Version {
		err := fmt.Errorf("protocol version mismatch: client %d, server %d", h.Version, proto.Version)
		c.SendError(err)
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	if !s.busy.TryLock() {
		c.SendError(&proto.RemoteError{Msg: "server busy with another client; try again later", Code: codeBusy})
		s.log.Printf("client %s: refused, busy", peer)
		return
	}
	defer s.busy.Unlock()
	host, _ := os.Hostname()
	if err := c.Send(proto.MsgHelloAck, proto.HelloAck{Version: proto.Version, Host: host, Device: s.deviceName()}); err != nil {
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	dev, err := s.sessionDevice(c)
	if err != nil {
		c.SendError(err)
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	if dev != nil {
		s.log.Printf("client %s (%s) connected; GID %d (%s)", peer, h.Host, dev.GID.Index, dev.GIDReason)
	} else {
		s.log.Printf("client %s (%s) connected; TCP tests only", peer, h.Host)
	}
	for {
		t, payload, err := c.RecvAny(sessionIdle)
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.log.Printf("client %s: disconnected", peer)
			} else {
				s.log.Printf("client %s: %v", peer, err)
			}
			return
		}
		switch t {
		case proto.MsgBye:
			s.log.Printf("client %s: done", peer)
			return
		case proto.MsgTest:
			var spec Spec
			if err := c.Decode(t, payload, &spec); err != nil {
				c.SendError(err)
				return
			}
			if err := spec.Validate(); err != nil {
				s.log.Printf("client %s: bad test: %v", peer, err)
				if !spec.RDMACM { // the client's QP info follows: stay in step
					if _, _, err := c.RecvAny(ctrlTimeout); err != nil {
						return
					}
				}
				c.SendError(fmt.Errorf("bad test parameters: %w", err))
				continue
			}
			if err := s.runTest(c, dev, spec); err != nil {
				s.log.Printf("client %s: %s: %v", peer, spec.Name(), err)
				var pe *proto.Error
				if errors.As(err, &pe) || errors.Is(err, io.EOF) {
					return // the connection is gone
				}
				c.SendError(err)
				continue
			}
			s.log.Printf("client %s: %s done", peer, spec.Name())
		default:
			c.SendError(fmt.Errorf("unexpected %s message", t))
			return
		}
	}
}

// sessionDevice picks the GID for this connection's local address.
func (s *Server) sessionDevice(c *proto.Conn) (*Device, error) {
	if s.dev == nil {
		return nil, nil
	}
	d := *s.dev
	local := addrOf(c.LocalAddr())
	if err := d.pickGID(s.cfg.Port, s.cfg.GIDIndex, local); err != nil {
		return nil, err
	}
	return &d, nil
}

func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// runTest is the server side of one test.
func (s *Server) runTest(c *proto.Conn, dev *Device, spec Spec) error {
	if spec.Transport == result.TransportTCP {
		return s.runTCPTest(c, spec)
	}
	if dev == nil {
		return refuseRDMA(c)
	}
	if spec.RDMACM {
		eps, err := s.connectCM(c, spec)
		if err != nil {
			return err
		}
		defer eps.close()
		return s.serve(c, spec, eps)
	}
	// The client sends its QP info right after the test: read it first, so a
	// failure below leaves the session in step for the next test.
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return err
	}
	eps, err := newTestEndpoints(dev, spec, false)
	if err != nil {
		return err
	}
	defer eps.close()
	if _, err := eps.connect(remote); err != nil {
		return err
	}
	if err := c.Send(proto.MsgQPInfo, eps.info()); err != nil {
		return err
	}
	return s.serve(c, spec, eps)
}

// connectCM is the server side of an rdma_cm connection: it listens on
// cmAddress, tells the client where, accepts the test's QPs and starts
// their engines once the client sent its buffers.
func (s *Server) connectCM(c *proto.Conn, spec Spec) (_ *testEndpoints, err error) {
	addr, devName, why, err := cmAddress(s.cfg.Device, s.cfg.Port, addrOf(c.LocalAddr()))
	if err != nil {
		return nil, err
	}
	lis, err := bindCM(addr)
	if err != nil {
		return nil, fmt.Errorf("rdma_cm listener on %s (%s): %w", addr, why, err)
	}
	if devName = lis.id.DeviceName(); s.cfg.Device != "" && devName != s.cfg.Device {
		lis.close()
		return nil, fmt.Errorf("rdma_cm address %s belongs to %s, not to the server's --device %s", addr, devName, s.cfg.Device)
	}
	dev, err := s.cmDevice(devName)
	if err != nil {
		lis.close()
		return nil, err
	}
	eps, err := newTestEndpoints(dev, spec, false)
	if err != nil {
		lis.close()
		return nil, err
	}
	eps.lis = lis
	defer func() {
		if err != nil {
			eps.close()
		}
	}()
	all := eps.all()
	if err := lis.listen(dev, len(all)); err != nil {
		return nil, err
	}
	info := eps.info()
	info.CMAddr, info.CMPort = lis.addr.Addr().String(), int(lis.addr.Port())
	if err := c.Send(proto.MsgQPInfo, info); err != nil {
		return nil, err
	}
	s.log.Printf("rdma_cm: listening on %s (%s), device %s, %d QPs", lis.addr, why, devName, len(all))
	abort := make(chan struct{})
	accepted := make(chan error, 1)
	go func() {
		accepted <- lis.acceptAll(dev, all, time.Now().Add(cmTimeout*time.Duration(2+len(all))), abort)
	}()
	// the client's buffers come once its QPs are connected, or its error
	var remote proto.QPInfo
	got := make(chan error, 1)
	go func() { got <- c.RecvTimeout(proto.MsgQPInfo, &remote, cmTimeout*time.Duration(3+len(all))) }()
	select {
	case err := <-accepted:
		if err != nil { // the client's connect fails too: take its message
			<-got
			return nil, err
		}
		if err := <-got; err != nil {
			return nil, err
		}
	case err := <-got:
		if err != nil {
			close(abort)
			<-accepted
			return nil, err
		}
		if err := <-accepted; err != nil {
			return nil, err
		}
	}
	if err := eps.startCM(remote); err != nil {
		return nil, err
	}
	return eps, nil
}

// serve runs the server side of a test whose QPs are connected: the
// responder loops, the barriers and the result.
func (s *Server) serve(c *proto.Conn, spec Spec, eps *testEndpoints) error {
	active := spec.Op == result.OpSend || (spec.Op == result.OpWrite && spec.Mode == result.ModeLat)
	qps := eps.measured()
	// one responder loop per measured QP, each on its own locked thread;
	// a loop's error also goes to firstErr
	dones := make([]chan error, len(qps))
	firstErr := make(chan error, 1)
	cpuUser, cpuSys := make([]int64, len(qps)), make([]int64, len(qps)) // written before dones
	if active {
		for i, ep := range qps {
			dones[i] = make(chan error, 1)
			go func() {
				err := func() error {
					defer runtime.UnlockOSThread()
					if err := lockThread(serverCPU(s.cfg.CPUs, i)); err != nil {
						return err
					}
					cpu := startCPU()
					defer func() { cpuUser[i], cpuSys[i] = cpu.stop() }()
					if spec.Mode == result.ModeLat {
						return ep.eng.LatServer()
					}
					return ep.eng.BWServer()
				}()
				if err != nil && len(qps) > 1 {
					err = fmt.Errorf("QP %d: %w", i, err)
				}
				if err != nil {
					select {
					case firstErr <- err:
					default:
					}
				}
				dones[i] <- err
			}()
		}
	}
	stopLoops := func() {
		if active {
			for i, ep := range qps {
				ep.eng.Abort()
				<-dones[i]
			}
		}
	}
	if err := c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseStart}); err != nil {
		stopLoops()
		return err
	}
	var end proto.Ready
	msgs := awaitEnd(c, &end)
	select {
	case err := <-msgs:
		if err != nil {
			stopLoops()
			return fmt.Errorf("client lost during the test: %w", err)
		}
	case loopErr := <-firstErr:
		// A loop failed (or timed out): tell the client, then wait for its end.
		stopLoops()
		return reportLoopError(c, loopErr, msgs)
	}
	totals := end.Totals
	if len(totals) == 0 && len(qps) == 1 {
		totals = []int64{end.Total}
	}
	if active && len(totals) != len(qps) {
		stopLoops()
		return fmt.Errorf("client's end gives %d per-QP totals for %d QPs", len(totals), len(qps))
	}
	loopErrs := make([]error, len(qps))
	if active {
		var wg sync.WaitGroup
		for i, ep := range qps {
			ep.eng.SetStop(totals[i])
			wg.Add(1)
			go func() {
				defer wg.Done()
				if spec.Unreliable() && spec.Op == result.OpSend && spec.Mode == result.ModeBW {
					// UC/UD drop messages a full receive queue cannot take: take what
					// arrived until the stream goes quiet, and report the count
					loopErrs[i] = awaitQuiet(ep.eng, dones[i])
					return
				}
				select {
				case loopErrs[i] = <-dones[i]:
				case <-time.After(EngineTimeout + 5*time.Second):
					ep.eng.Abort()
					loopErrs[i] = fmt.Errorf("responder did not reach %d iterations: %w", totals[i], <-dones[i])
				}
			}()
		}
		wg.Wait()
	}
	loopErr := errors.Join(loopErrs...)
	res := proto.ServerResult{}
	for i, ep := range qps {
		res.Iterations += int64(ep.eng.Iterations())
		res.CPUUserNS += cpuUser[i]
		res.CPUSysNS += cpuSys[i]
	}
	if loopErr != nil {
		res.Error = loopErr.Error()
	}
	if err := c.Send(proto.MsgResult, res); err != nil {
		return err
	}
	return loopErr
}

// unreliableQuiet is how long an unreliable bandwidth receiver waits for
// more messages after the client's end before it counts the rest as lost.
var unreliableQuiet = 500 * time.Millisecond

// awaitQuiet waits for the bandwidth receiver loop (done) to reach its stop
// count, or stops it once no message arrived for unreliableQuiet.
func awaitQuiet(eng *verbs.Engine, done <-chan error) error {
	last := eng.Iterations()
	t := time.NewTicker(unreliableQuiet / 5)
	defer t.Stop()
	quietSince := time.Now()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if n := eng.Iterations(); n != last {
				last, quietSince = n, time.Now()
			} else if time.Since(quietSince) >= unreliableQuiet {
				eng.Abort()
				if err := <-done; err != nil && !errors.Is(err, verbs.ErrAborted) {
					return err
				}
				return nil
			}
		}
	}
}

// heartbeat sends Ready{alive} every heartbeatEvery until the returned stop
// is called: the server tells a slow test from a dead client.
func (cl *Client) heartbeat() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if cl.c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseAlive}) != nil {
					return
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// finishTest ends a test on the control connection: it reports a measuring
// error to the server, or sends the end with the total iteration count and
// returns the server's result.
func (cl *Client) finishTest(total int64, err error, totals ...int64) (proto.ServerResult, error) {
	if err != nil {
		cl.c.SendError(err)
		return proto.ServerResult{}, err
	}
	if err := cl.c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseEnd, Total: total, Totals: totals}); err != nil {
		return proto.ServerResult{}, err
	}
	var sr proto.ServerResult
	if err := cl.c.RecvTimeout(proto.MsgResult, &sr, EngineTimeout+15*time.Second); err != nil {
		return proto.ServerResult{}, err
	}
	if sr.Error != "" {
		return proto.ServerResult{}, fmt.Errorf("server: %s", sr.Error)
	}
	return sr, nil
}

// reportLoopError tells the client why the server's loop failed, then waits
// for the client's end of the test (msgs, from awaitEnd).
func reportLoopError(c *proto.Conn, loopErr error, msgs <-chan error) error {
	c.SendError(loopErr)
	if err := <-msgs; err != nil {
		return fmt.Errorf("%v; then: %w", loopErr, err)
	}
	return nil
}

// awaitEnd reads the client's heartbeats until its end message. The channel
// then gets nil (and *end is filled), or the error that ended the wait: a
// lost connection, or no heartbeat within heartbeatTimeout.
func awaitEnd(c *proto.Conn, end *proto.Ready) <-chan error {
	msgs := make(chan error, 1)
	go func() {
		for {
			var r proto.Ready
			if err := c.RecvTimeout(proto.MsgReady, &r, heartbeatTimeout); err != nil {
				msgs <- err
				return
			}
			if r.Phase == proto.PhaseEnd {
				*end = r
				msgs <- nil
				return
			}
		}
	}()
	return msgs
}

// serverCPU is the CPU of the server's responder loop of QP i: cpus round
// robin, or -1 (no pinning) for an empty list.
func serverCPU(cpus []int, i int) int {
	if len(cpus) == 0 {
		return -1
	}
	return cpus[i%len(cpus)]
}

// ClientConfig configures the client side of `rdmabench run` and `loopback`.
type ClientConfig struct {
	Device   string
	Port     int
	GIDIndex int // -1: auto
	Run      RunOptions
	// Transport "tcp": the run has TCP tests only and opens no RDMA device.
	Transport string
	// RDMACM opens the device through librdmacm, as rdma_cm tests need; with
	// no Device, the device is the one rdma_cm reaches the server through.
	RDMACM bool
}

// Client is a connected control session.
type Client struct {
	c    *proto.Conn
	dev  *Device
	peer string
	ack  proto.HelloAck
	// PathMTU is the path MTU of the last test, bytes: the minimum of both
	// ports' active MTUs and --mtu.
	PathMTU int
	// Inline is the inline size the device granted in the last test, bytes.
	Inline int
	// conn is the connection setup of the last RDMA test.
	conn *result.ConnSetup
}

// Dial connects to a server, retrying until timeout, and opens the device.
func Dial(ctx context.Context, addr string, cfg ClientConfig, timeout time.Duration) (*Client, error) {
	deadline := time.Now().Add(timeout)
	for delay := 50 * time.Millisecond; ; delay = min(delay*2, time.Second) {
		cl, err := dial(ctx, addr, cfg, deadline)
		var re *proto.RemoteError
		if !errors.As(err, &re) || re.Code != codeBusy || time.Now().Add(delay).After(deadline) || ctx.Err() != nil {
			return cl, err
		}
		time.Sleep(delay) // the server is finishing another session: try again
	}
}

// codeBusy is the RemoteError code of a server serving another client.
const codeBusy = "busy"

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
	c := proto.NewConn(nc, ctrlTimeout)
	var dev *Device
	if cfg.Transport != result.TransportTCP {
		open, name := OpenDevice, cfg.Device
		if cfg.RDMACM {
			open = OpenDeviceCM
			if server := addrOf(nc.RemoteAddr()); name == "" {
				name, err = clientCMDevice(server, cfg.Port)
			} else if server.IsLoopback() { // fail before the first test, as the server would
				_, _, _, err = cmAddress(name, cfg.Port, server)
			}
		}
		if err == nil {
			dev, err = open(name, cfg.Port, cfg.GIDIndex, addrOf(nc.LocalAddr()))
		}
		if err != nil {
			c.Close()
			return nil, err
		}
	}
	host, _ := os.Hostname()
	cl := &Client{c: c, dev: dev, peer: addr}
	if err := c.Send(proto.MsgHello, proto.Hello{Version: proto.Version, Tool: "rdmabench", Host: host}); err != nil {
		cl.Close()
		return nil, err
	}
	if err := c.Recv(proto.MsgHelloAck, &cl.ack); err != nil {
		cl.Close()
		return nil, fmt.Errorf("handshake with %s: %w", addr, err)
	}
	return cl, nil
}

// Device is the client's device.
func (cl *Client) Device() *Device { return cl.dev }

// Close says goodbye and releases everything.
func (cl *Client) Close() error {
	cl.c.Send(proto.MsgBye, nil)
	err := cl.c.Close()
	if cl.dev != nil {
		err = errors.Join(err, cl.dev.Close())
	}
	return err
}

// Run runs one test against the server.
// Cancelling ctx aborts the test in progress.
func (cl *Client) Run(ctx context.Context, spec Spec, o RunOptions) (result.Result, error) {
	if spec.Transport == result.TransportTCP {
		return cl.runTCP(ctx, spec, o)
	}
	if cl.dev == nil {
		return result.Result{}, errors.New("an RDMA test on a TCP-only client (--transport tcp)")
	}
	connect := cl.connectExchange
	if spec.RDMACM {
		connect = cl.connectCM
	}
	eps, mtu, conn, err := connect(spec)
	if eps != nil {
		defer eps.close()
	}
	if err != nil {
		return result.Result{}, err
	}
	ep := eps.probe
	cl.Inline = ep.qp.Caps().MaxInlineData
	var rd proto.Ready
	if err := cl.c.Recv(proto.MsgReady, &rd); err != nil {
		return result.Result{}, err
	}
	defer context.AfterFunc(ctx, func() {
		for _, e := range eps.measured() {
			e.eng.Abort()
		}
	})()
	stopHeartbeat := cl.heartbeat()
	var res result.Result
	var total int64
	var totals []int64 // per QP, multi-QP tests
	var load *loadRun
	if len(eps.loads) > 0 {
		load = startLoad(eps.loads, o.LoadCPUs)
	}
	if spec.Mode == result.ModeLat {
		res, total, err = measureLat(ep.eng, baseResult(spec, ep), spec, o)
	} else if len(eps.extra) > 0 {
		res, totals, err = measureBWMulti(eps.measured(), spec, o)
		for _, t := range totals {
			total += t
		}
	} else {
		res, total, err = measureBW(ep, spec, o)
	}
	if load != nil {
		lr, lerr := load.finish(spec.Load)
		res.Load, err = lr, errors.Join(err, lerr)
	}
	stopHeartbeat()
	sr, err := cl.finishTest(total, err, totals...)
	if err != nil {
		return result.Result{}, err
	}
	if res.CPU != nil {
		res.CPU.ServerUserNS, res.CPU.ServerSysNS = sr.CPUUserNS, sr.CPUSysNS
		res.CPU.ServerUSPerMsg = perMsgUS(sr.CPUUserNS+sr.CPUSysNS, res.Iterations)
	}
	if g := cl.dev.Port.LinkGbps(); g > 0 {
		res.LinkUtilization = res.Bandwidth.GbitPerSec / g
	}
	if spec.Unreliable() && spec.Op == result.OpSend && spec.Mode == result.ModeBW && sr.Iterations < total {
		res.LostMessages = total - sr.Iterations
	}
	cl.PathMTU = mtu
	res.Connection = conn
	cl.conn = conn
	return res, nil
}

// connectExchange creates the test's QPs and connects them by exchanging
// QP numbers and PSNs with the server on the control connection. It
// returns the endpoints (also on error, to be closed), the path MTU and
// the connection setup.
func (cl *Client) connectExchange(spec Spec) (*testEndpoints, int, *result.ConnSetup, error) {
	eps, err := newTestEndpoints(cl.dev, spec, true)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := cl.c.Send(proto.MsgTest, spec); err != nil {
		return eps, 0, nil, err
	}
	if err := cl.c.Send(proto.MsgQPInfo, eps.info()); err != nil {
		return eps, 0, nil, err
	}
	var remote proto.QPInfo
	if err := cl.c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return eps, 0, nil, err
	}
	mtu, err := eps.connect(remote)
	if err != nil {
		cl.c.SendError(err)
		return eps, 0, nil, err
	}
	conn := newConnSetup(result.ConnExchange, eps.all())
	conn.Device = cl.dev.Ctx.Name()
	conn.GIDIndex, conn.GID, conn.GIDType, conn.GIDReason = cl.dev.GID.Index, cl.dev.GID.GID.String(), cl.dev.GID.Type.String(), cl.dev.GIDReason
	return eps, mtu, conn, nil
}

// connectCM is the client side of an rdma_cm connection: the server says
// where it listens, the client connects each QP there, then sends its
// buffers.
func (cl *Client) connectCM(spec Spec) (*testEndpoints, int, *result.ConnSetup, error) {
	if !cl.dev.Ctx.CM() {
		return nil, 0, nil, errors.New("--rdma-cm test on a client opened without rdma_cm (ClientConfig.RDMACM)")
	}
	if err := cl.c.Send(proto.MsgTest, spec); err != nil {
		return nil, 0, nil, err
	}
	var remote proto.QPInfo
	if err := cl.c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return nil, 0, nil, err
	}
	fail := func(eps *testEndpoints, err error) (*testEndpoints, int, *result.ConnSetup, error) {
		cl.c.SendError(err)
		return eps, 0, nil, err
	}
	ip, err := netip.ParseAddr(remote.CMAddr)
	if err != nil || remote.CMPort < 1 || remote.CMPort > 65535 {
		return fail(nil, fmt.Errorf("server's rdma_cm address %q port %d invalid", remote.CMAddr, remote.CMPort))
	}
	dst := netip.AddrPortFrom(ip, uint16(remote.CMPort))
	eps, err := newTestEndpoints(cl.dev, spec, true)
	if err != nil {
		return fail(nil, err)
	}
	if err := eps.checkPeers(remote); err != nil {
		return fail(eps, err)
	}
	if eps.cmch, err = verbs.NewEventChannel(); err != nil {
		return fail(eps, err)
	}
	all := eps.all()
	mtu, err := cmConnectAll(eps.cmch, all, dst)
	if err != nil {
		return fail(eps, err)
	}
	if err := cl.c.Send(proto.MsgQPInfo, eps.info()); err != nil {
		return eps, 0, nil, err
	}
	if err := eps.startCM(remote); err != nil {
		return fail(eps, err)
	}
	conn := newConnSetup(result.ConnRDMACM, all)
	conn.Address, conn.Device = dst.String(), cl.dev.Ctx.Name()
	if path, err := eps.probe.qp.Path(); err == nil {
		if g, err := cl.dev.Ctx.GID(path.Port, path.SGIDIndex); err == nil {
			conn.GIDIndex, conn.GID, conn.GIDType, conn.GIDReason = g.Index, g.GID.String(), g.Type.String(), cmGIDReason(dst)
		}
	}
	return eps, mtu, conn, nil
}
