package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// One client's session on the server: admission, handshake, then its tests
// one after the other. Nothing is allocated for the peer before it has
// authenticated; the server's busy lock is taken at its first test request.

// session serves one accepted connection; it is in the startup table st
// (Serve's) until the handshake is over.
func (s *Server) session(ctx context.Context, nc net.Conn, st *admit.Entry) {
	freeSlot := func() { s.lis.starts.Done(st) }
	defer freeSlot()
	peer := nc.RemoteAddr().String()
	if re := s.refusal(admit.AddrOf(nc.RemoteAddr())); re != nil {
		s.lis.limit.Printf(s.log, "refused "+re.Code, "client %s: refused (%s)", peer, re.Code)
		admit.Refuse(nc, re)
		return
	}
	c := proto.NewConn(nc, handshakeTimeout)
	defer c.Close()
	defer s.track(c, peer)()
	if ctx.Err() != nil { // shutting down: closeSessions may have missed it
		return
	}
	// the whole handshake within handshakeTimeout, however the peer trickles
	expired := time.AfterFunc(handshakeTimeout, func() { c.Close() })
	h, proof, err := auth.ServerHandshake(c, s.cfg.AuthKey)
	// the conn's read deadline is the same handshakeTimeout: whichever of
	// the two fires first, the handshake ran out of time
	var ne net.Error
	if timedOut := errors.As(err, &ne) && ne.Timeout(); (!expired.Stop() || timedOut) && ctx.Err() == nil {
		err = fmt.Errorf("handshake not done within %v: closed", handshakeTimeout)
	}
	freeSlot()
	if err != nil && st.Dropped.Load() {
		return // dropStartup logged it
	}
	if err != nil {
		// one line per second per kind: a flood cannot flood the log, and
		// probes that connect and close hide no authentication failure
		kind := "handshake"
		var ae *auth.Error
		var pe *proto.PerftestPeerError
		switch {
		case errors.As(err, &ae):
			kind = "auth"
		case errors.Is(err, io.EOF):
			kind = "closed"
		case errors.As(err, &pe):
			// a perftest tool, or rdmabench's drop-in trying perftest's
			// exchange before it falls back to this protocol: not an error
			s.lis.limit.Printf(s.log, "perftest", "client %s: spoke perftest's exchange (version %q), not rdmabench's: closed "+
				"(a perftest tool, or a drop-in that tries perftest first and comes back with rdmabench's)", peer, pe.Version)
			return
		}
		s.lis.limit.Printf(s.log, kind, "client %s: %v", peer, err)
		return
	}
	c.SetTimeout(ctrl.MsgTimeout)
	if s.busy.Load() { // advisory: the lock itself is taken at the first test
		c.SendError(&proto.RemoteError{Msg: "server busy with another client; try again later", Code: admit.CodeBusy})
		s.log.Printf("client %s: refused, busy", peer)
		return
	}
	if s.cfg.MaxSession > 0 {
		limit := time.AfterFunc(s.cfg.MaxSession, func() {
			s.endSession(c, peer, fmt.Sprintf("session limit reached (server --max-session %v)", s.cfg.MaxSession))
		})
		defer limit.Stop()
	}
	dev, err := s.sessionDevice(c)
	if err != nil {
		c.SendError(err)
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	ack := proto.HelloAck{Version: proto.Version, Device: s.deviceName(), Proof: proof, IntervalCounters: true}
	ack.Host, _ = os.Hostname()
	if dev != nil {
		ack.Device = dev.Ctx.Name()
	}
	if env, _, err := device.SideEnv(dev, c.LocalAddr(), kinds.ServerCPU(s.cfg.CPUs, 0)); err == nil {
		ack.Env, _ = json.Marshal(env)
	}
	if err := c.Send(proto.MsgHelloAck, ack); err != nil {
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	auth := ""
	if proof != nil {
		auth = ", authenticated"
	}
	if dev != nil {
		s.log.Printf("client %s (%s) connected%s; device %s port %d (%s), GID %d (%s)", peer, h.Host, auth, dev.Ctx.Name(), dev.Port.Port,
			dev.Reason, dev.GID.Index, dev.GIDReason)
	} else {
		s.log.Printf("client %s (%s) connected%s; TCP tests only", peer, h.Host, auth)
	}
	s.serveTests(c, dev, peer)
}

// endSession tells the client why the server ends its session (within a
// second) and closes the connection, which aborts a running test.
func (s *Server) endSession(c *proto.Conn, peer, why string) {
	s.log.Printf("client %s: %s: closing", peer, why)
	sent := make(chan struct{})
	go func() {
		c.SendError(errors.New(why))
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(time.Second):
	}
	c.Close()
}

// serveTests runs the client's tests until it says bye, goes idle for
// IdleTimeout, or the connection fails. It takes the busy lock at the first
// test and keeps it to the end of the session.
func (s *Server) serveTests(c *proto.Conn, dev *device.Device, peer string) {
	locked := false
	var failed error // the session's first failure, for --once
	fail := func(err error) {
		if failed == nil {
			failed = fmt.Errorf("client %s: %w", peer, err)
		}
	}
	defer func() {
		if locked {
			if s.cfg.Once {
				s.once.end(failed)
			}
			s.busy.Store(false)
		}
	}()
	for {
		t, payload, err := c.RecvAny(s.cfg.IdleTimeout)
		if err != nil {
			fail(fmt.Errorf("session ended without its bye: %w", err))
			switch {
			case errors.Is(err, io.EOF):
				s.log.Printf("client %s: disconnected", peer)
			case errors.Is(err, os.ErrDeadlineExceeded):
				s.endSession(c, peer, fmt.Sprintf("idle for %v between tests (server --idle-timeout)", s.cfg.IdleTimeout))
			default:
				s.log.Printf("client %s: %v", peer, err)
			}
			return
		}
		switch t {
		case proto.MsgBye:
			s.log.Printf("client %s: done", peer)
			var bye proto.Bye
			if len(payload) > 0 && s.cfg.OnBye != nil && c.Decode(t, payload, &bye) == nil && len(bye.Report) > 0 {
				s.cfg.OnBye(peer, bye.Report)
			}
			return
		case proto.MsgDoctor: // doctor HOST: read-only, no busy lock (doctorserve.go)
			var req proto.DoctorRequest // none from an older client
			if len(payload) > 0 {
				if err := c.Decode(t, payload, &req); err != nil {
					s.log.Printf("client %s: %v", peer, err)
					return
				}
			}
			if err := s.serveDoctor(c, dev, peer, req); err != nil {
				s.log.Printf("client %s: %v", peer, err)
				return
			}
		case proto.MsgTest:
			if !locked {
				if !s.busy.CompareAndSwap(false, true) {
					c.SendError(&proto.RemoteError{Msg: "server busy with another client; try again later", Code: admit.CodeBusy})
					s.log.Printf("client %s: refused at its first test, busy", peer)
					return
				}
				locked = true
			}
			var spec spec.Spec
			if err := c.Decode(t, payload, &spec); err != nil {
				fail(err)
				c.SendError(err)
				return
			}
			if err := spec.Validate(); err != nil {
				fail(fmt.Errorf("bad test: %w", err))
				s.log.Printf("client %s: bad test: %v", peer, err)
				if !spec.RDMACM { // the client's QP info follows: stay in step
					if _, _, err := c.RecvAny(ctrl.MsgTimeout); err != nil {
						return
					}
				}
				c.SendError(fmt.Errorf("bad test parameters: %w", err))
				continue
			}
			if err := s.runTest(c, dev, spec); err != nil {
				fail(fmt.Errorf("%s: %w", spec.Name(), err))
				s.log.Printf("client %s: %s: %v", peer, spec.Name(), err)
				var pe *proto.Error
				if errors.As(err, &pe) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
					return // the connection is gone
				}
				c.SendError(device.RemoteError(err))
				continue
			}
			s.log.Printf("client %s: %s done", peer, spec.Name())
		default:
			fail(fmt.Errorf("unexpected %s message", t))
			c.SendError(fmt.Errorf("unexpected %s message", t))
			return
		}
	}
}

// admit reserves the server's side of spec before anything is mapped or
// registered. A refusal reads the client's QP information (which follows
// the test unless rdma_cm) so the session stays in step, and comes back
// as a RemoteError with CodeBudget for the session to send.
func (s *Server) admit(c ctrl.Chan, spec spec.Spec) (release func(), err error) {
	release, err = s.ledger.Reserve(endpoint.Describe(spec), endpoint.NeedOf(spec, false))
	if err == nil {
		return release, nil
	}
	if !spec.RDMACM {
		var skip proto.QPInfo
		c.Recv(proto.MsgQPInfo, &skip)
	}
	return nil, refusal{err}
}

// refusal is the server's budget refusal: its session logs it as it is
// and sends it (proto.Conn.SendError) as a RemoteError with CodeBudget.
type refusal struct{ err error }

func (r refusal) Error() string { return "refused: " + r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// As makes errors.As find the RemoteError the client is sent.
func (r refusal) As(target any) bool {
	re, ok := target.(**proto.RemoteError)
	if ok {
		*re = &proto.RemoteError{Msg: r.Error(), Code: endpoint.CodeBudget}
	}
	return ok
}
