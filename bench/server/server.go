package server

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// DefaultIdleTimeout is how long a session may sit between tests (or
// between its hello and its first test) before the server closes it, when
// Config.IdleTimeout is 0.
const DefaultIdleTimeout = 15 * time.Second

// Config configures `rdmabench server`.
type Config struct {
	Device   string
	Port     int // RDMA port; 0: chosen with the device (device.Choose)
	GIDIndex int // -1: auto per connection
	Log      *log.Logger
	CPUs     []int           // pin the responder thread to CPUs[0]; nil: no pinning
	Budget   endpoint.Budget // memory and QPs of the tests at once (zero fields: the defaults); see bench/endpoint/budget.go
	// NUMA is where each device's responder threads and buffers go
	// (Device.Place).
	NUMA device.NUMAChoice
	// AuthKey is the shared key a client must prove it holds (see
	// auth.go); nil: no authentication. The server keeps the slice.
	AuthKey []byte
	// Exposed serves clients that are not on loopback although there is no
	// AuthKey: the operator chose the address (--bind). Without AuthKey and
	// without Exposed the server is in protected mode: it serves loopback
	// clients (127.0.0.0/8, ::1) only and tells others how to open it.
	Exposed bool
	// Allow, when not empty, admits only clients whose address lies in one
	// of these prefixes; checked at accept, before anything is read.
	Allow []netip.Prefix
	// IdleTimeout closes a session that sends nothing for this long between
	// tests; 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxSession closes a session this long after its hello, aborting its
	// running test; 0: no limit.
	MaxSession time.Duration
	// MaxStartups caps the connections between accept and authentication;
	// when full, the oldest is dropped for a new one (startups.go). 0:
	// DefaultMaxStartups, from RLIMIT_NOFILE.
	MaxStartups int
	// MaxStartupsPerAddr caps them per source address (IPv6: per /64); a
	// connection past it is refused with a reason. 0:
	// DefaultMaxStartupsPerAddr (at most MaxStartups).
	MaxStartupsPerAddr int
	// OnBye, when set, receives the Report of a client's bye (proto.Bye),
	// at most proto.MaxPayload bytes of the client's JSON, unchecked; it
	// runs on the session's goroutine. Empty byes do not call it.
	OnBye func(peer string, report []byte)
	// Once ends Serve when the first session that ran a test has ended
	// (serveonce.go); Serve then returns that session's first failure.
	Once bool
}

// Server answers clients one at a time, for as long as it runs. A client
// that fails or disappears ends only its own session.
type Server struct {
	cfg Config
	dev *device.Device
	log *log.Logger
	// busy is held by the session whose tests run: taken at its first test
	// request (after authentication), released when it ends.
	busy atomic.Bool
	// devMu guards cmDevs and routeDevs: sessions choose their device
	// concurrently, before any holds busy.
	devMu sync.Mutex
	// cmDevs are librdmacm's contexts of the devices rdma_cm tests ran on,
	// by "name/port".
	cmDevs map[string]*device.Device
	// routeDevs are the devices chosen by route for clients, by
	// "name/port".
	routeDevs map[string]*device.Device
	lis       listenState      // the accept loop's state (listener.go)
	once      onceState        // Config.Once (serveonce.go)
	ledger    *endpoint.Ledger // the tests' memory and QPs against cfg.Budget
}

// New opens the device and checks the port. Close it when done.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	// without --ib-dev the first active port, not the first device: each
	// session chooses its own (sessionDevice)
	name, port, why, err := device.Choose(cfg.Device, cfg.Port, netip.Addr{})
	var dev *device.Device
	if err == nil {
		dev, err = device.Open(name, port, -2, netip.Addr{})
	}
	if err != nil {
		if !kinds.NoRDMADevice(err) {
			return nil, err
		}
		cfg.Log.Printf("%v: serving TCP tests only", err)
		dev = nil
	} else {
		dev.Reason = why
		dev.Place(cfg.NUMA)
	}
	return &Server{cfg: cfg, dev: dev, log: cfg.Log, ledger: endpoint.NewLedger(cfg.Budget)}, nil
}

// Device is the device the server chose at its start (the first active
// port, or Config.Device); nil: it serves TCP tests only.
func (s *Server) Device() *device.Device { return s.dev }

// Close closes the devices. After a Serve whose sessions did not end in
// time (a shutdown that gave up on them) it leaves them open: the process
// is about to exit, and they may still back QPs.
func (s *Server) Close() error {
	if s.lis.abandoned.Load() {
		return nil
	}
	s.devMu.Lock()
	defer s.devMu.Unlock()
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

// cmDevice is librdmacm's context of the named device and port (the one
// an rdma_cm ID bound to), opened on first use.
func (s *Server) cmDevice(name string, port int) (*device.Device, error) {
	s.devMu.Lock()
	defer s.devMu.Unlock()
	key := fmt.Sprintf("%s/%d", name, port)
	if d := s.cmDevs[key]; d != nil {
		return d, nil
	}
	d, err := device.OpenCM(name, port, -2, netip.Addr{})
	if err != nil {
		return nil, err
	}
	d.Place(s.cfg.NUMA)
	if s.cmDevs == nil {
		s.cmDevs = map[string]*device.Device{}
	}
	s.cmDevs[key] = d
	return d, nil
}

// sessionDevice picks the GID for this connection's local address.
func (s *Server) sessionDevice(c *proto.Conn) (*device.Device, error) {
	if s.dev == nil {
		return nil, nil
	}
	local := admit.AddrOf(c.LocalAddr())
	name, port, why, err := device.Choose(s.cfg.Device, s.cfg.Port, local)
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
	if err := d.PickGID(d.Port.Port, s.cfg.GIDIndex, local); err != nil {
		return nil, err
	}
	return &d, nil
}

// routeDevice opens (once) the device and port a client's route chose.
func (s *Server) routeDevice(name string, port int) (*device.Device, error) {
	s.devMu.Lock()
	defer s.devMu.Unlock()
	key := fmt.Sprintf("%s/%d", name, port)
	if d := s.routeDevs[key]; d != nil {
		return d, nil
	}
	d, err := device.Open(name, port, -2, netip.Addr{})
	if err != nil {
		return nil, err
	}
	d.Place(s.cfg.NUMA)
	if s.routeDevs == nil {
		s.routeDevs = map[string]*device.Device{}
	}
	s.routeDevs[key] = d
	return d, nil
}

// deviceName is the server's RDMA device, or "" when it runs TCP tests only.
func (s *Server) deviceName() string {
	if s.dev == nil {
		return ""
	}
	return s.dev.Ctx.Name()
}
