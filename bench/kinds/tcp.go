package kinds

// The kernel-TCP baseline (Spec.Transport "tcp"): SEND ping-pong latency and
// streaming bandwidth over one kernel TCP connection per test, measured by
// the C loops of sockeng.Engine and reported in the same Result as RDMA
// tests.
//
// The control flow is the RDMA one: Test, QPInfo (client, all zero), QPInfo
// (server: TCPPort, a data listener on the control connection's local
// address), the client connects, Ready{start}, the client measures with
// heartbeats and shuts down its sending side, Ready{end,total}, Result. The
// server checks that it answered (or received) exactly total messages.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/sockeng"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// tcpAcceptTimeout is how long the server waits for the client's data
// connection.
var tcpAcceptTimeout = 10 * time.Second

// tcpWarmRound is the length a time-based bandwidth warm-up round aims at.
const tcpWarmRound = 10 * time.Millisecond

// errTCPOnly refuses an RDMA test on a server without an RDMA device.
var errTCPOnly = errors.New("this server has no RDMA device: it runs TCP tests only (--transport tcp)")

// NoRDMADevice reports whether err means that this host has no usable RDMA
// device at all (as opposed to a bad device name, port or GID).
func NoRDMADevice(err error) bool {
	return errors.Is(err, verbs.ErrNoKernelSupport) || errors.Is(err, verbs.ErrNoDevices) || errors.Is(err, verbs.ErrNoProvider)
}

// RefuseRDMA is the server's answer to an RDMA test when it has no device.
// It reads the client's QPInfo first so that the session stays in step.
func RefuseRDMA(c ctrl.Chan) error {
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return err
	}
	return errTCPOnly
}

// CheckTCPSpec refuses what the TCP baseline does not measure.
func CheckTCPSpec(s spec.Spec) error {
	if !s.Traits().TCP {
		return fmt.Errorf("op %s has no TCP equivalent: the TCP baseline runs send (ping-pong and streaming)", s.Op)
	}
	if s.Rate > 0 || s.Load != nil {
		return errors.New("open-loop rate and latency under load are RDMA-only: not supported with --transport tcp")
	}
	return nil
}

// TCPTimedInterval says in words what one latency sample of a TCP test is.
func TCPTimedInterval(s spec.Spec) string {
	if s.Mode == result.ModeBW {
		return "bandwidth: first write to the receiver's acknowledgement of the last byte; " +
			"latency: send(2) time of each message, until the kernel accepted its last byte"
	}
	return "half of a TCP ping-pong round trip (RTT/2), from write to the reply's last byte read"
}

// newSockEngine sets TCP_NODELAY (each message goes out when written, in both
// modes) and creates the engine over c.
func newSockEngine(c *net.TCPConn, s spec.Spec) (*sockeng.Engine, error) {
	if err := c.SetNoDelay(true); err != nil {
		return nil, fmt.Errorf("TCP_NODELAY: %w", err)
	}
	return sockeng.NewEngine(c, sockeng.Config{Size: s.Size, Samples: endpoint.SampleCap(), Timeout: endpoint.EngineTimeout})
}

// cleanEnd reports whether a responder loop ended because the client shut
// down its side between iterations: the normal end of a ping-pong test.
func cleanEnd(err error) bool {
	var pc *sockeng.PeerClosedError
	return errors.As(err, &pc) && pc.Boundary
}

// tcpKind is the kernel-TCP baseline: SEND ping-pong latency or
// streaming bandwidth over one TCP data connection (TCPData), measured by
// the C loops of sockeng.Engine.
type tcpKind struct{}

func (tcpKind) Measure(t *ClientTest) (Measured, error) {
	var m Measured
	var err error
	if t.Spec.Mode == result.ModeLat {
		m.Res, m.Total, err = measure.Lat(t.TCP.Eng, tcpResult(t.Spec), t.Spec, t.Opts)
	} else {
		m.Res, m.Total, err = measureTCPBW(t.TCP.Eng, t.Spec, t.Opts)
	}
	t.TCP.dc.CloseWrite() // the end of the stream: the server's loop returns
	return m, err
}

// AcceptTCP is the server side of a TCP test's data connection; the
// session has read its Test message.
func AcceptTCP(c ctrl.Chan, spec spec.Spec) (*TCPData, error) {
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return nil, err
	}
	if err := CheckTCPSpec(spec); err != nil {
		return nil, err
	}
	local, _ := c.LocalAddr().(*net.TCPAddr)
	laddr := &net.TCPAddr{}
	if local != nil {
		laddr.IP, laddr.Zone = local.IP, local.Zone
	}
	ln, err := net.ListenTCP("tcp", laddr)
	if err != nil {
		return nil, fmt.Errorf("TCP data listener: %w", err)
	}
	defer ln.Close()
	if err := c.Send(proto.MsgQPInfo, proto.QPInfo{TCPPort: ln.Addr().(*net.TCPAddr).Port}); err != nil {
		return nil, err
	}
	dc, err := acceptPeer(ln, admit.AddrOf(c.RemoteAddr()), tcpAcceptTimeout)
	ln.Close()
	if err != nil {
		return nil, err
	}
	eng, err := newSockEngine(dc, spec)
	if err != nil {
		dc.Close()
		return nil, err
	}
	return &TCPData{dc: dc, Eng: eng}, nil
}

// respond is the server side of a TCP test whose data connection is
// accepted: its loop, the start, the client's end and its result.
func (tcpKind) Respond(t *ServerTest) error {
	c, spec, eng, dc := t.C, t.Spec, t.TCP.Eng, t.TCP.dc
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if spec.Mode == result.ModeLat {
			done <- eng.LatServer()
		} else {
			done <- eng.BWServer()
		}
	}()
	if err := c.Send(proto.MsgReady, proto.Ready{Phase: proto.PhaseStart}); err != nil {
		eng.Abort()
		<-done
		return err
	}
	stopBeat := Heartbeat(c) // until the result or error: the client's watch
	defer stopBeat()
	var end proto.Ready
	msgs := awaitEnd(c, &end)
	var loopErr error
	running := true
	select {
	case err := <-msgs:
		if err != nil {
			eng.Abort()
			<-done
			return fmt.Errorf("client lost during the test: %w", err)
		}
	case loopErr = <-done:
		running = false
		if loopErr != nil && !cleanEnd(loopErr) {
			// Close the data connection so the client stops at once, tell it
			// why, then wait for its end.
			eng.Close()
			dc.Close()
			stopBeat()
			return reportLoopError(c, loopErr, msgs)
		}
		if err := <-msgs; err != nil {
			return err
		}
	}
	if running {
		eng.SetStop(end.Total) // the client's shutdown usually ended the loop already
		select {
		case loopErr = <-done:
		case <-time.After(endpoint.EngineTimeout + 5*time.Second):
			eng.Abort()
			loopErr = fmt.Errorf("TCP server loop did not end after %d messages: %w", end.Total, <-done)
		}
	}
	if cleanEnd(loopErr) {
		loopErr = nil
	}
	n := int64(eng.Iterations())
	if loopErr == nil && n != end.Total {
		loopErr = fmt.Errorf("the client reports %d messages including warm-up, the server counted %d", end.Total, n)
	}
	res := proto.ServerResult{Iterations: n}
	if loopErr != nil {
		res.Error = loopErr.Error()
	}
	stopBeat()
	if err := c.Send(proto.MsgResult, res); err != nil {
		return err
	}
	return loopErr
}

// acceptPeer accepts the data connection of the client at peer (any address
// when peer is not valid), closing connections from elsewhere, for up to d.
func acceptPeer(ln *net.TCPListener, peer netip.Addr, d time.Duration) (*net.TCPConn, error) {
	if err := ln.SetDeadline(time.Now().Add(d)); err != nil {
		return nil, err
	}
	for {
		c, err := ln.AcceptTCP()
		if err != nil {
			return nil, fmt.Errorf("TCP data connection: the client did not connect to %s within %v: %w", ln.Addr(), d, err)
		}
		if !peer.IsValid() || admit.AddrOf(c.RemoteAddr()) == peer {
			return c, nil
		}
		c.Close()
	}
}

// ConnectTCP is the client side of a TCP test's data connection: the
// test, an empty QP info, the server's data port, the connection.
func ConnectTCP(ctx context.Context, c ctrl.Chan, spec spec.Spec) (*TCPData, error) {
	if err := c.Send(proto.MsgTest, spec); err != nil {
		return nil, err
	}
	if err := c.Send(proto.MsgQPInfo, proto.QPInfo{}); err != nil {
		return nil, err
	}
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return nil, err
	}
	if remote.TCPPort < 1 || remote.TCPPort > 65535 {
		err := fmt.Errorf("the server sent no TCP data port (port %d): it does not run TCP tests", remote.TCPPort)
		c.SendError(err)
		return nil, err
	}
	ra, _ := c.RemoteAddr().(*net.TCPAddr)
	if ra == nil {
		return nil, fmt.Errorf("control connection is not TCP (%v)", c.RemoteAddr())
	}
	dst := &net.TCPAddr{IP: ra.IP, Zone: ra.Zone, Port: remote.TCPPort}
	d := net.Dialer{Timeout: ctrl.MsgTimeout}
	nc, err := d.DialContext(ctx, "tcp", dst.String())
	if err != nil {
		err = fmt.Errorf("TCP data connection: %w", err)
		c.SendError(err)
		return nil, err
	}
	dc := nc.(*net.TCPConn)
	eng, err := newSockEngine(dc, spec)
	if err != nil {
		dc.Close()
		c.SendError(err)
		return nil, err
	}
	return &TCPData{dc: dc, Eng: eng}, nil
}

// tcpResult is a TCP result's fixed part. The RDMA queue parameters (tx
// depth, CQ moderation, rx depth, inline) do not apply and stay zero.
func tcpResult(s spec.Spec) result.Result {
	r := result.Result{Op: s.Op, Mode: s.Mode, SizeBytes: s.Size, Warmup: s.Warmup, TimedInterval: TCPTimedInterval(s),
		Transport: result.TransportTCP}
	r.UseStats(s.Stats())
	return r
}

// tcpPhase streams one counted phase of msgs messages and waits for the
// receiver's acknowledgement of its last byte.
func tcpPhase(eng *sockeng.Engine, msgs uint64) error {
	if err := eng.BWPhase(msgs); err != nil {
		return err
	}
	for eng.Written() < msgs {
		eng.ResetSamples()
		if _, err := eng.BWClient(math.MaxInt64); err != nil {
			return err
		}
	}
	return eng.BWFinish()
}

// tcpSender is the TCP baseline's streaming sender as a measure.BWSender: the
// socket engine's C loop writes the phase's messages, its samples in a
// flat buffer that the bufDrain records at each return. Stopping posting
// ends the writes (BWFinish then ends the phase).
type tcpSender struct {
	eng     *sockeng.Engine
	target  uint64
	stopped bool
}

func (t *tcpSender) Step(until int64) (bool, error) {
	t.eng.ResetSamples()
	return t.eng.BWClient(until)
}
func (t *tcpSender) Completed() uint64 { return t.eng.Written() }
func (t *tcpSender) Done() bool        { return t.stopped || t.eng.Written() >= t.target }
func (t *tcpSender) StopPosting()      { t.stopped = true }
func (t *tcpSender) WaitRoom() error   { return nil } // the mark recorded the buffer

// bufDrain is a measure.BWMarker over a flat sample buffer (the TCP baseline's):
// each mark records the buffer (samples: a view valid until the next C
// call) on the measuring thread, between C calls, into lat, the intervals
// and the progress line. The kernel's socket buffer keeps the stream
// going meanwhile.
type bufDrain struct {
	samples  func() []uint64
	lat      *hist.Histogram
	iv       *measure.Intervals
	prog     *measure.Progress
	lastDone int64
}

func (b *bufDrain) Mark(done, now int64, last bool) {
	s := b.samples()
	b.lat.RecordSlice(s, 0)
	if last {
		b.iv.Next = math.MaxInt64
	}
	b.iv.Add(s, done-b.lastDone, now)
	b.prog.Update(now, done, b.lat)
	b.lastDone = done
}

func (b *bufDrain) SenderDone() {}

// measureTCPBW runs the client side of a TCP streaming test. The warm-up is
// sent in counted phases, each acknowledged by the receiver, so that no
// warm-up byte is in flight when the measured phase starts; the measured
// phase (counted in iterations mode, open-ended in duration mode) lasts from
// its first write to the acknowledgement of its last byte.
func measureTCPBW(eng *sockeng.Engine, s spec.Spec, o measure.Options) (result.Result, int64, error) {
	if err := measure.LockThread(o.CPU, o.NodeCPUs); err != nil {
		return result.Result{}, 0, err
	}
	defer measure.UnlockThread()
	warmed := int64(0)
	if s.WarmupTime > 0 {
		until := verbs.Now() + int64(s.WarmupTime)
		n := int64(16)
		for now := verbs.Now(); now < until; now = verbs.Now() {
			if err := tcpPhase(eng, uint64(n)); err != nil {
				return result.Result{}, warmed, fmt.Errorf("warm-up: %w", err)
			}
			warmed += n
			per := max((verbs.Now()-now)/n, 1)
			n = measure.Clamp(min(int64(tcpWarmRound), until-now)/per+1, 1, 1<<20)
		}
	} else if s.Warmup > 0 {
		if err := tcpPhase(eng, uint64(s.Warmup)); err != nil {
			return result.Result{}, warmed, fmt.Errorf("warm-up: %w", err)
		}
		warmed = s.Warmup
	}
	target := uint64(sockeng.OpenEnded)
	if s.Iters > 0 {
		target = uint64(s.Iters)
	}
	lat := hist.New()
	if err := eng.BWPhase(target); err != nil {
		return result.Result{}, warmed, err
	}
	start := verbs.Now()
	iv := measure.NewIntervals(s, o, start)
	prog := measure.NewProgress(s, o, start)
	defer prog.Clear()
	deadline := int64(math.MaxInt64)
	if s.Duration > 0 {
		deadline = start + int64(s.Duration)
	}
	// past the deadline the drain to the acknowledgement belongs to the
	// last interval
	snd := &tcpSender{eng: eng, target: target}
	if err := measure.BWPhase(snd, &bufDrain{samples: eng.Samples, lat: lat, iv: iv, prog: prog}, iv.Next, deadline, iv.Every); err != nil {
		return result.Result{}, warmed + int64(eng.Written()), err
	}
	if err := eng.BWFinish(); err != nil {
		return result.Result{}, warmed + int64(eng.Written()), err
	}
	first, last := eng.Span()
	ops := int64(eng.Written())
	iv.Flush(last)
	if iv.Err != nil {
		return result.Result{}, warmed + ops, fmt.Errorf("write .hlog: %w", iv.Err)
	}
	r := tcpResult(s)
	r.Iterations = ops
	r.Warmup = warmed
	r.DurationNS = last - first
	r.Bandwidth = result.NewBandwidth(s.Size, ops, last-first)
	r.Intervals = iv.List
	if err := r.SetLatency(lat, 1); err != nil {
		return result.Result{}, warmed + ops, fmt.Errorf("encode histogram: %w", err)
	}
	return r, warmed + ops, nil
}
