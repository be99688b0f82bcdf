package endpoint

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The data plane's half of connecting a test's QPs, one function per side
// and method. The control plane (bench's client, bench/server) carries each
// side's proto.QPInfo over its control connection and hands it in, or gives
// these functions a func that does; everything else is here: the
// endpoints, the check of the peer, the QPs to RTS (by exchange) or
// connected by rdma_cm, their engines started.
//
//	by exchange                           rdma_cm (cm.go)
//	DialExchange: NewTest, swap, RTS      AcceptCM: listen, announce, accept, recv, start
//	AcceptExchange: check, NewTest, RTS   DialCM: NewTest, connect, send, start

// DialExchange is the client's side of a connection by exchange: it creates
// the test's endpoints on dev, hands their QPInfo to swap (the control
// plane: it sends the test and the QPInfo and returns the server's), checks
// the server's ends against dev (far: the server is on another host) and
// brings every QP to RTS towards them. It returns the endpoints (also on an
// error after they exist, to be closed), the probe's path MTU and the
// connection setup.
func DialExchange(dev *device.Device, s spec.Spec, far bool, swap func(mine proto.QPInfo) (proto.QPInfo, error)) (*Test, int, *result.ConnSetup, error) {
	eps, err := NewTest(dev, s, true)
	if err != nil {
		return nil, 0, nil, err
	}
	remote, err := swap(eps.Info())
	if err != nil {
		return eps, 0, nil, err
	}
	if err := checkPair(dev, remote, far, true); err != nil {
		return eps, 0, nil, err
	}
	mtu, err := eps.Connect(remote)
	if err != nil {
		return eps, 0, nil, err
	}
	return eps, mtu, eps.SetupOn(dev, result.ConnExchange), nil
}

// SetupOn is the setup of the test's QPs for its result, connected by
// method on dev: their setup times, the device and dev's GID.
func (t *Test) SetupOn(dev *device.Device, method string) *result.ConnSetup {
	conn := NewConnSetup(method, t.All())
	conn.Device = dev.Ctx.Name()
	conn.GIDIndex, conn.GID, conn.GIDType, conn.GIDReason = dev.GID.Index, dev.GID.GID.String(), dev.GID.Type.String(), dev.GIDReason
	return conn
}

// AcceptExchange is the server's side of a connection by exchange, given
// the client's QPInfo: it checks the client's ends against dev (far: the
// client is on another host), creates the test's endpoints and brings
// every QP to RTS towards the client's. The server then sends their Info.
// The endpoints are closed on an error.
func AcceptExchange(dev *device.Device, s spec.Spec, remote proto.QPInfo, far bool) (*Test, error) {
	if err := checkPair(dev, remote, far, false); err != nil {
		return nil, err
	}
	eps, err := NewTest(dev, s, false)
	if err != nil {
		return nil, err
	}
	if _, err := eps.Connect(remote); err != nil {
		eps.Close()
		return nil, err
	}
	return eps, nil
}

// checkPair is device.CheckPair with the roles of this side (client) and
// the peer.
func checkPair(dev *device.Device, peer proto.QPInfo, far, client bool) error {
	if client {
		return device.CheckPair(dev, peer, far, "client", "server")
	}
	return device.CheckPair(dev, peer, far, "server", "client")
}

// DialCM is the client's side of an rdma_cm connection, given the
// server's QPInfo (where it listens, the test's token, its buffers): it
// creates the test's endpoints on dev, connects each QP to the server's
// listener, hands their QPInfo to send (the control plane) and starts
// their engines towards the server's buffers. It returns the endpoints
// (also on an error after they exist, to be closed), the probe's path MTU
// and the connection setup.
func DialCM(dev *device.Device, s spec.Spec, remote proto.QPInfo, send func(mine proto.QPInfo) error) (*Test, int, *result.ConnSetup, error) {
	ip, err := netip.ParseAddr(remote.CMAddr)
	if err != nil || remote.CMPort < 1 || remote.CMPort > 65535 {
		return nil, 0, nil, fmt.Errorf("server's rdma_cm address %q port %d invalid", remote.CMAddr, remote.CMPort)
	}
	dst := netip.AddrPortFrom(ip, uint16(remote.CMPort))
	token, err := CMTokenFrom(remote.CMToken)
	if err != nil {
		return nil, 0, nil, err
	}
	eps, err := NewTest(dev, s, true)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := eps.CheckPeers(remote); err != nil {
		return eps, 0, nil, err
	}
	if eps.CMCh, err = verbs.NewEventChannel(); err != nil {
		return eps, 0, nil, err
	}
	all := eps.All()
	mtu, err := CMConnectAll(eps.CMCh, all, dst, token)
	if err != nil {
		return eps, 0, nil, err
	}
	if err := send(eps.Info()); err != nil {
		return eps, 0, nil, err
	}
	if err := eps.StartCM(remote); err != nil {
		return eps, 0, nil, err
	}
	conn := NewConnSetup(result.ConnRDMACM, all)
	conn.Address, conn.Device = dst.String(), dev.Ctx.Name()
	eps.SetCMGID(conn, dev, CMGIDReason(dst))
	return eps, mtu, conn, nil
}

// SetCMGID gives conn the GID on dev that rdma_cm chose for the probe's
// path, with why; false when the path is not known.
func (t *Test) SetCMGID(conn *result.ConnSetup, dev *device.Device, why string) bool {
	path, err := t.Probe.QP.Path()
	if err != nil {
		return false
	}
	if g, err := dev.Ctx.GID(path.Port, path.SGIDIndex); err == nil {
		conn.GIDIndex, conn.GID, conn.GIDType, conn.GIDReason = g.Index, g.GID.String(), g.Type.String(), why
	}
	return true
}

// CMSite is where the server's side of an rdma_cm test listens and on
// which device its QPs run.
type CMSite struct {
	// Device and Port are the server's --device and --ib-port ("", 0: any).
	Device string
	Port   int
	// Local is the control connection's local address: the listener's
	// when no Device is set (CMAddress).
	Local netip.Addr
	// Open opens (or finds) the device and port an rdma_cm id bound to.
	Open func(name string, port int) (*device.Device, error)
	// Log notes the listener and the requests it rejects.
	Log interface{ Printf(string, ...any) }
}

// AcceptCM is the server's side of an rdma_cm connection: it listens at
// the site, creates the test's endpoints on the device the listener bound
// to, hands their QPInfo with the listener's address and token to announce
// (the control plane), accepts the client's QPs while recv (the control
// plane, its wait bounded by timeout) waits for the client's buffers, and
// starts the engines towards them. The endpoints are closed on an error.
func AcceptCM(s spec.Spec, at CMSite, announce func(proto.QPInfo) error, recv func(timeout time.Duration) (proto.QPInfo, error)) (_ *Test, err error) {
	lis, why, dev, err := at.bind()
	if err != nil {
		return nil, err
	}
	eps, err := NewTest(dev, s, false)
	if err != nil {
		lis.Close()
		return nil, err
	}
	eps.Lis = lis
	lis.Log = at.Log
	defer func() {
		if err != nil {
			eps.Close()
		}
	}()
	all := eps.All()
	if err := lis.Listen(dev, len(all)); err != nil {
		return nil, err
	}
	info := eps.Info()
	info.CMAddr, info.CMPort, info.CMToken = lis.Addr.Addr().String(), int(lis.Addr.Port()), lis.Token[:]
	if err := announce(info); err != nil {
		return nil, err
	}
	at.Log.Printf("rdma_cm: listening on %s (%s), device %s port %d, %d QPs", lis.Addr, why, lis.ID.DeviceName(), dev.Port.Port, len(all))
	remote, err := lis.acceptWhile(dev, all, func() (proto.QPInfo, error) {
		return recv(CMTimeout * time.Duration(3+len(all)))
	})
	if err != nil {
		return nil, err
	}
	if err := eps.StartCM(remote); err != nil {
		return nil, err
	}
	return eps, nil
}

// bind binds the test's listener at the site (CMAddress: why is the
// address's reason) and opens the device and port its id bound to; the
// listener is closed on an error.
func (at CMSite) bind() (_ *CMListener, why string, _ *device.Device, err error) {
	addr, _, why, err := CMAddress(at.Device, at.Local)
	if err != nil {
		return nil, "", nil, err
	}
	lis, err := BindCM(addr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("rdma_cm listener on %s (%s): %w", addr, why, err)
	}
	if devName := lis.ID.DeviceName(); at.Device != "" && devName != at.Device {
		lis.Close()
		return nil, "", nil, fmt.Errorf("rdma_cm address %s belongs to %s, not to the server's --device %s", addr, devName, at.Device)
	}
	name, port, _ := CMBinding(at.Device, at.Port, lis.ID.DeviceName(), lis.ID.Port()) // the CM ID's port, not --ib-port
	dev, err := at.Open(name, port)
	if err != nil {
		lis.Close()
		return nil, "", nil, err
	}
	return lis, why, dev, nil
}

// acceptWhile accepts every QP of all (AcceptAll) while recv waits for the
// client's buffers, which come once its QPs are connected, or its error.
// A failed accept waits for recv (the client's connect fails too: its
// message is taken); a failed recv aborts the accept.
func (l *CMListener) acceptWhile(dev *device.Device, all []*Endpoint, recv func() (proto.QPInfo, error)) (proto.QPInfo, error) {
	abort := make(chan struct{})
	accepted := make(chan error, 1)
	go func() {
		accepted <- l.AcceptAll(dev, all, time.Now().Add(CMTimeout*time.Duration(2+len(all))), abort)
	}()
	var remote proto.QPInfo
	got := make(chan error, 1)
	go func() {
		var err error
		remote, err = recv()
		got <- err
	}()
	select {
	case err := <-accepted:
		if err != nil {
			<-got
			return proto.QPInfo{}, err
		}
		if err := <-got; err != nil {
			return proto.QPInfo{}, err
		}
	case err := <-got:
		if err != nil {
			close(abort)
			<-accepted
			return proto.QPInfo{}, err
		}
		if err := <-accepted; err != nil {
			return proto.QPInfo{}, err
		}
	}
	return remote, nil
}
