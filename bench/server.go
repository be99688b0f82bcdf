package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Timeouts of the control connection.
var (
	ctrlTimeout      = 10 * time.Second // one control message
	heartbeatEvery   = time.Second      // client heartbeat while a test runs
	heartbeatTimeout = 6 * time.Second  // server gives up on a silent (dead or stopped) client: 6 missed heartbeats
	sessionIdle      = 10 * time.Minute // server closes an idle session
)

// ServerConfig configures `rdmabench server`.
type ServerConfig struct {
	Device   string
	Port     int // RDMA port
	GIDIndex int // -1: auto per connection
	Log      *log.Logger
	CPUs     []int      // pin the responder thread to CPUs[0]; nil: no pinning
	Budget   Budget     // memory and QPs of the tests at once (zero fields: the defaults); see budget.go
	NUMA     NUMAChoice // where each device's responder threads and buffers go (Device.Place)
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
	// routeDevs are the devices chosen by route for clients, by
	// "name/port" (used under busy).
	routeDevs map[string]*Device
	ledger    *ledger // the tests' memory and QPs against cfg.Budget
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
	} else {
		dev.Place(cfg.NUMA)
	}
	return &Server{cfg: cfg, dev: dev, log: cfg.Log, ledger: newLedger(cfg.Budget)}, nil
}

// Close closes the devices.
func (s *Server) Close() error {
	var errs []error
	for _, d := range s.cmDevs {
		errs = append(errs, d.Close())
	}
	for _, d := range s.routeDevs {
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
	d.Place(s.cfg.NUMA)
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
	dev, err := s.sessionDevice(c)
	if err != nil {
		c.SendError(err)
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	ack := proto.HelloAck{Version: proto.Version, Device: s.deviceName()}
	ack.Host, _ = os.Hostname()
	if dev != nil {
		ack.Device = dev.Ctx.Name()
	}
	if env, _, err := sideEnv(dev, c.LocalAddr(), serverCPU(s.cfg.CPUs, 0)); err == nil {
		ack.Env, _ = json.Marshal(env)
	}
	if err := c.Send(proto.MsgHelloAck, ack); err != nil {
		s.log.Printf("client %s: %v", peer, err)
		return
	}
	if dev != nil {
		s.log.Printf("client %s (%s) connected; device %s port %d (%s), GID %d (%s)", peer, h.Host, dev.Ctx.Name(), dev.Port.Port,
			dev.Reason, dev.GID.Index, dev.GIDReason)
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
	local := addrOf(c.LocalAddr())
	name, port, why, err := chooseDevice(s.cfg.Device, s.cfg.Port, local)
	if err != nil {
		return nil, err
	}
	base := s.dev
	if name != "" && (name != s.dev.Ctx.Name() || port != s.dev.Port.Port) {
		if base, err = s.routeDevice(name, port); err != nil {
			return nil, err
		}
	}
	d := *base
	d.Reason = why
	if err := d.pickGID(d.Port.Port, s.cfg.GIDIndex, local); err != nil {
		return nil, err
	}
	return &d, nil
}

// routeDevice opens (once) the device and port a client's route chose.
func (s *Server) routeDevice(name string, port int) (*Device, error) {
	key := fmt.Sprintf("%s/%d", name, port)
	if d := s.routeDevs[key]; d != nil {
		return d, nil
	}
	d, err := OpenDevice(name, port, -2, netip.Addr{})
	if err != nil {
		return nil, err
	}
	d.Place(s.cfg.NUMA)
	if s.routeDevs == nil {
		s.routeDevs = map[string]*Device{}
	}
	s.routeDevs[key] = d
	return d, nil
}

func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}
