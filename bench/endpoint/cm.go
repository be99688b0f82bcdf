package endpoint

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// rdma_cm connection of a test's QPs (Spec.RDMACM). The control connection
// still carries the test, the buffers (rkey, address) and the barriers; the
// QPs themselves are created and connected by librdmacm:
//
//	client                                  server
//	Test                           ->
//	                               <-       QPInfo{CMAddr, CMPort, CMToken, buffers}
//	rdma_connect per QP (private   ->       rdma_accept per QP (requests
//	data: index, count, token)              without the token: rdma_reject)
//	QPInfo{buffers}                ->
//	                               <-       Ready{start}

// NewConnSetup summarises the endpoints' setup times.
func NewConnSetup(method string, eps []*Endpoint) *result.ConnSetup {
	c := &result.ConnSetup{Method: method, QPs: len(eps)}
	h := hist.New()
	for _, ep := range eps {
		ns := ep.setup.Nanoseconds()
		c.SetupNS = append(c.SetupNS, ns)
		h.Record(ns)
	}
	if n := h.Count(); n >= 2 { // the median of these QPs (descriptive, not an estimate)
		c.P50NS = hist.Value{NS: h.ValueAtRank((n + 1) / 2), OK: true}
	}
	if len(eps) > 0 {
		c.MaxNS = slices.Max(c.SetupNS)
	}
	return c
}

// CMPrivate is the private data of an rdma_cm connect request: which QP of
// the test it connects, and the test's token (proto.QPInfo.CMToken), which
// the server issued over the authenticated control session.
type CMPrivate struct {
	Index, Count uint32
	Token        [proto.CMTokenLen]byte
}

// cmMagic starts rdmabench's connect requests ("RBC" and format 2).
var cmMagic = [4]byte{'R', 'B', 'C', 2}

// cmPrivateLen is the length of marshalled CMPrivate, bytes.
const cmPrivateLen = 12 + proto.CMTokenLen

func (p CMPrivate) Marshal() []byte {
	b := make([]byte, cmPrivateLen)
	copy(b, cmMagic[:])
	binary.BigEndian.PutUint32(b[4:], p.Index)
	binary.BigEndian.PutUint32(b[8:], p.Count)
	copy(b[12:], p.Token[:])
	return b
}

// parseCMPrivate decodes the private data of a connect request. The
// transport may pad it with zeros (RC requests carry 56 bytes). It does not
// check the token (see CMListener.accept).
func parseCMPrivate(b []byte) (CMPrivate, error) {
	if len(b) < cmPrivateLen {
		return CMPrivate{}, fmt.Errorf("rdma_cm private data: %d bytes, want at least %d", len(b), cmPrivateLen)
	}
	if [4]byte(b[:4]) != cmMagic {
		return CMPrivate{}, fmt.Errorf("rdma_cm private data: magic % x, want % x (not an rdmabench client of this version)", b[:4], cmMagic[:])
	}
	p := CMPrivate{Index: binary.BigEndian.Uint32(b[4:]), Count: binary.BigEndian.Uint32(b[8:]), Token: [proto.CMTokenLen]byte(b[12:cmPrivateLen])}
	if p.Count == 0 || p.Count > maxCMQPs || p.Index >= p.Count {
		return CMPrivate{}, fmt.Errorf("rdma_cm private data: QP %d of %d out of range (at most %d QPs)", p.Index, p.Count, maxCMQPs)
	}
	return p, nil
}

// CMTokenFrom checks the token the server sent in its QPInfo.
func CMTokenFrom(b []byte) ([proto.CMTokenLen]byte, error) {
	if len(b) != proto.CMTokenLen {
		return [proto.CMTokenLen]byte{}, fmt.Errorf("server's rdma_cm token has %d bytes, want %d", len(b), proto.CMTokenLen)
	}
	return [proto.CMTokenLen]byte(b), nil
}

// maxCMQPs bounds the QPs of one test: measured plus load QPs.
const maxCMQPs = spec.MaxQPs + spec.MaxLoadQPs

// CMAddress is where the server listens for rdma_cm connections: the local
// address of the control connection, unless that is a loopback address
// (rdma_cm resolves no loopback addresses); then the first IP address in the
// GID table of an active port of the device (or of any device) that is
// neither loopback nor link-local. It returns the address, the device it
// belongs to ("" when the control address is used) and why it was chosen.
func CMAddress(device string, local netip.Addr) (netip.Addr, string, string, error) {
	if local.IsValid() && !local.IsLoopback() && !local.IsUnspecified() {
		return local, "", "the control connection's local address", nil
	}
	names := []string{device}
	if device == "" {
		var err error
		if names, err = verbs.DeviceNames(); err != nil {
			return netip.Addr{}, "", "", err
		}
	}
	for _, name := range names {
		a, port, err := cmDeviceAddress(name)
		if err != nil {
			return netip.Addr{}, "", "", err
		}
		if a.IsValid() {
			return a, name, fmt.Sprintf("rdma_cm cannot use the loopback address %s: %s is %s port %d's first other address", local, a, name, port), nil
		}
	}
	which := "no RDMA device has another IP address (in its GID table, or on an iWARP device's netdev)"
	if device != "" {
		which = device + " has no other IP address (in its GID table, or on an iWARP device's netdev)"
	}
	return netip.Addr{}, "", "", fmt.Errorf("--rdma-cm: rdma_cm cannot resolve the loopback address %s, and %s: add one to the device's netdev, or use a control address that is not loopback",
		local, which)
}

// cmDeviceAddress is the first address (firstAddress) of the device's
// active ports, in port order, and its port; an invalid address when none
// has one.
func cmDeviceAddress(name string) (netip.Addr, int, error) {
	ctx, err := verbs.Open(name) // not librdmacm's: it would keep every device open
	if err != nil {
		return netip.Addr{}, 0, err
	}
	defer ctx.Close()
	attr, err := ctx.QueryDevice()
	if err != nil {
		return netip.Addr{}, 0, err
	}
	for p := 1; p <= attr.PhysPortCnt; p++ {
		if pa, err := ctx.QueryPort(p); err != nil || !pa.Active {
			continue
		}
		addrs, err := device.Addrs(ctx, p)
		if err != nil {
			return netip.Addr{}, 0, err
		}
		if a, ok := firstAddress(addrs); ok {
			return a, p, nil
		}
	}
	return netip.Addr{}, 0, nil
}

// firstAddress is the first IPv4 (then IPv6) address of addrs that is
// neither loopback nor link-local.
func firstAddress(addrs []netip.Addr) (netip.Addr, bool) {
	var v6 netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
			continue
		}
		if a.Is4() {
			return a, true
		}
		if !v6.IsValid() {
			v6 = a
		}
	}
	return v6, v6.IsValid()
}

// CMBinding is the device and port an rdma_cm side opens, given --ib-dev
// and --ib-port (flagDev, "" when not given, and flagPort) and the device
// and port_num its CM ID bound to (idDev, idPort): the CM ID's, whatever
// --ib-port says, since rdma_cm chose the port from the address (a
// multi-port NIC's second port is port 2 even when --ib-port is left at
// 1). Only when --ib-dev names another device than the CM ID's are the
// flags kept (bound false): opening it then says that the address is not
// on it.
func CMBinding(flagDev string, flagPort int, idDev string, idPort int) (dev string, port int, bound bool) {
	if flagDev != "" && flagDev != idDev {
		return flagDev, flagPort, false
	}
	return idDev, idPort, true
}

// ClientCMDevice is the device and port a client's rdma_cm QPs use to
// reach a server at control address server: those rdma_cm resolves it to
// (the CM ID's device and port_num), or for a loopback server those it
// resolves the address the server listens on to (CMAddress; on device
// when it is not "").
func ClientCMDevice(server netip.Addr, device string) (string, int, error) {
	if server.IsLoopback() {
		a, _, _, err := CMAddress(device, server)
		if err != nil {
			return "", 0, err
		}
		server = a
	}
	return cmDevice(server, CMTimeout)
}

// cmDevice resolves which local device and port reach dst through
// rdma_cm.
func cmDevice(dst netip.Addr, timeout time.Duration) (string, int, error) {
	ch, err := verbs.NewEventChannel()
	if err != nil {
		return "", 0, err
	}
	defer ch.Close()
	id, err := ch.CreateID()
	if err != nil {
		return "", 0, err
	}
	defer id.Close()
	if err := id.Resolve(netip.Addr{}, netip.AddrPortFrom(dst, 1), timeout); err != nil {
		return "", 0, err
	}
	return id.DeviceName(), id.Port(), nil
}

// CMTimeout bounds each rdma_cm step: address and route resolution, and
// each connection.
var CMTimeout = 5 * time.Second

// CMConnect creates the endpoint's QP on a new id of ch and connects it to
// dst as QP index of count with the test's token, within CMTimeout per
// step. It returns the path MTU rdma_cm chose. On iWARP, a request refused
// because its source port is taken (cmPortTaken) is made again on a new id
// and QP, up to cmPortTries times; the QP's setup time counts every try.
func (e *Endpoint) CMConnect(ch *verbs.EventChannel, dst netip.AddrPort, index, count int, token [proto.CMTokenLen]byte) (int, error) {
	e.setupStart = time.Now()
	for try := 1; ; try++ {
		mtu, err := e.cmConnect(ch, dst, index, count, token)
		if err == nil || !cmPortTaken(e.Dev.Ctx.IsIWARP(), err) {
			return mtu, err
		}
		if try == cmPortTries {
			return 0, fmt.Errorf("%w (%d tries, each on a new rdma_cm port: on iWARP, rdma_cm chooses a source port without asking the kernel's TCP, whose earlier connections may hold it)", err, try)
		}
		if err := e.dropCM(); err != nil {
			return 0, err
		}
	}
}

// dropCM closes the endpoint's rdma_cm QP and id, for a new try of
// CMConnect on a new id.
func (e *Endpoint) dropCM() error {
	err := errors.Join(e.QP.Close(), e.CMID.Close())
	e.QP, e.CMID = nil, nil
	return err
}

// cmPortTries bounds the tries of one iWARP rdma_connect whose source port
// is taken (cmPortTaken).
const cmPortTries = 3

// cmPortTaken says whether rdma_connect itself failed because the source
// port rdma_cm chose is taken in the kernel's TCP: an iWARP provider binds a
// TCP socket to the port rdma_cm chose, and rdma_cm knows only its own ids,
// not the TCP connections still holding the same address pair (TIME_WAIT of
// an earlier test's connection). siw then fails rdma_connect with
// EADDRNOTAVAIL or EADDRINUSE ("sometimes iwcm chooses ports in use", its
// connect's comment); hardware iWARP avoids it through the port mapper
// (iwpmd). A new id draws a new port.
func cmPortTaken(iwarp bool, err error) bool {
	var ve *verbs.Error
	return iwarp && errors.As(err, &ve) && ve.Op == "rdma_connect" &&
		(errors.Is(ve.Err, syscall.EADDRNOTAVAIL) || errors.Is(ve.Err, syscall.EADDRINUSE))
}

// cmConnect is one try of CMConnect.
func (e *Endpoint) cmConnect(ch *verbs.EventChannel, dst netip.AddrPort, index, count int, token [proto.CMTokenLen]byte) (int, error) {
	id, err := ch.CreateID()
	if err != nil {
		return 0, err
	}
	e.CMID = id
	if e.Spec.TClass != 0 {
		if err := id.SetTOS(e.Spec.TClass); err != nil {
			return 0, err
		}
	}
	if err := id.Resolve(netip.Addr{}, dst, CMTimeout); err != nil {
		return 0, err
	}
	if !id.UsesContext(e.Dev.Ctx) {
		return 0, fmt.Errorf("rdma_cm reaches %s through %s, but the test runs on %s (--device)", dst.Addr(), id.DeviceName(), e.Dev.Ctx.Name())
	}
	if err := e.createQP(id); err != nil {
		return 0, err
	}
	if err := e.setAckTimeout(); err != nil {
		return 0, err
	}
	rd := e.maxRdAtomic()
	e.RdDepth = e.initDepth(rd)
	p := verbs.ConnParam{PrivateData: CMPrivate{Index: uint32(index), Count: uint32(count), Token: token}.Marshal(),
		ResponderResources: rd, InitiatorDepth: e.RdDepth, RetryCount: e.Spec.RetryCount, RNRRetryCount: e.Spec.RNRRetry}
	if err := id.Connect(p, time.Now().Add(CMTimeout)); err != nil {
		return 0, err
	}
	return e.cmEstablished()
}

// cmEstablished narrows the connected QP's remote access to what the test
// needs (not on iWARP: see cmNarrowsAccess), records the READ/atomic depth
// the QP got and returns its path MTU.
func (e *Endpoint) cmEstablished() (int, error) {
	if cmNarrowsAccess(e.Dev.Ctx.IsIWARP()) {
		if err := e.QP.SetAccess(e.access); err != nil {
			return 0, err
		}
	}
	e.setup = time.Since(e.setupStart)
	path, err := e.QP.Path()
	if err != nil {
		return 0, err
	}
	if path.MaxRdAtomic > 0 {
		// the active side's QP reaches RTS with the depth of the peer's
		// reply (librdmacm), which may be less than it asked for; never
		// more (siw reports its inbound depth in max_rd_atomic)
		e.RdDepth = min(e.RdDepth, path.MaxRdAtomic)
	}
	return path.MTU, nil
}

// cmNarrowsAccess says whether a connected rdma_cm QP gets its remote
// access narrowed (ibv_modify_qp IBV_QP_ACCESS_FLAGS in RTS). Not on iWARP:
// Chelsio's cxgb4 refuses it on a connected QP (EIO), and iw_cm already
// grants REMOTE_READ and REMOTE_WRITE at the QP; there the test's MR
// (PoolConfig: RemoteAccess) is what limits the peer to what the test needs.
func cmNarrowsAccess(iwarp bool) bool { return !iwarp }

// CMConnectAll connects every QP of eps to the server's rdma_cm address dst
// with the test's token, one after the other. It returns the probe's path
// MTU.
func CMConnectAll(ch *verbs.EventChannel, eps []*Endpoint, dst netip.AddrPort, token [proto.CMTokenLen]byte) (int, error) {
	mtu := 0
	for i, ep := range eps {
		m, err := ep.CMConnect(ch, dst, i, len(eps), token)
		if err != nil {
			return 0, fmt.Errorf("rdma_cm QP %d of %d to %s: %w", i, len(eps), dst, err)
		}
		if i == 0 {
			mtu = m
		}
	}
	return mtu, nil
}

// CMListener is the server's rdma_cm listening id for one test.
type CMListener struct {
	ch   *verbs.EventChannel
	ID   *verbs.CMID
	Addr netip.AddrPort
	// Token is the test's random token: requests without it are rejected.
	Token [proto.CMTokenLen]byte
	// Log notes rejected requests (nil: not logged).
	Log interface{ Printf(string, ...any) }
	// Perftest: requests carry no private data (a perftest -R client,
	// bench/dropin/peer/cm.go): the n-th one connects QP n.
	Perftest bool
	next     int
}

// BindCM binds a listener's id to addr (an ephemeral port); its device
// is then known (DeviceName).
func BindCM(addr netip.Addr) (*CMListener, error) {
	return BindCMAt(netip.AddrPortFrom(addr, 0))
}

// BindCMAt binds a listener's id to ap (port 0: an ephemeral one).
func BindCMAt(ap netip.AddrPort) (_ *CMListener, err error) {
	l := &CMListener{}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if l.ch, err = verbs.NewEventChannel(); err != nil {
		return nil, err
	}
	if l.ID, err = l.ch.CreateID(); err != nil {
		return nil, err
	}
	if err := l.ID.Bind(ap); err != nil {
		return nil, err
	}
	rand.Read(l.Token[:])
	l.Addr = netip.AddrPortFrom(ap.Addr(), uint16(l.ID.LocalPort()))
	return l, nil
}

// Listen starts listening with a backlog of n, on dev's context.
func (l *CMListener) Listen(dev *device.Device, n int) error {
	if !l.ID.UsesContext(dev.Ctx) {
		return fmt.Errorf("rdma_cm address %s belongs to %s, not to %s", l.Addr.Addr(), l.ID.DeviceName(), dev.Ctx.Name())
	}
	return l.ID.Listen(n)
}

// Close destroys the listener; call it after the endpoints' ids are closed.
func (l *CMListener) Close() error {
	var errs []error
	if l.ID != nil {
		errs = append(errs, l.ID.Close())
	}
	if l.ch != nil {
		errs = append(errs, l.ch.Close())
	}
	return errors.Join(errs...)
}

// AcceptAll accepts one connection per endpoint (the client says which in
// its private data) until every one is established, deadline passes or
// abort is closed. A request without the test's token (not from this
// test's client) is rejected and logged, and the wait goes on; a request
// with the token that does not fit is rejected, and ends the test.
func (l *CMListener) AcceptAll(dev *device.Device, eps []*Endpoint, deadline time.Time, abort <-chan struct{}) error {
	established := 0
	for established < len(eps) {
		ev, err := l.ch.Next(deadline, abort)
		if err != nil {
			return fmt.Errorf("rdma_cm: %d of %d QPs connected: %w", established, len(eps), err)
		}
		switch ev.Type {
		case verbs.CMEventConnectRequest:
			if err := l.checkToken(ev.PrivateData); err != nil && !l.Perftest {
				ev.ID.Reject()
				ev.ID.Close()
				if l.Log != nil {
					l.Log.Printf("rdma_cm: rejected a connection request on %s: %v", l.Addr, err)
				}
				continue
			}
			if err := l.accept(dev, eps, ev); err != nil {
				ev.ID.Reject()
				ev.ID.Close()
				return err
			}
		case verbs.CMEventEstablished:
			ep := endpointOf(eps, ev.ID)
			if ep == nil {
				return fmt.Errorf("rdma_cm: ESTABLISHED for an unknown connection")
			}
			if _, err := ep.cmEstablished(); err != nil {
				return err
			}
			established++
		default:
			return fmt.Errorf("rdma_cm: %d of %d QPs connected: %s (status %d)", established, len(eps), ev.Type, ev.Status)
		}
	}
	return nil
}

// checkToken checks a connect request's private data for the test's token
// (in constant time).
func (l *CMListener) checkToken(b []byte) error {
	p, err := parseCMPrivate(b)
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(p.Token[:], l.Token[:]) != 1 {
		return errors.New("rdma_cm private data: not this test's token")
	}
	return nil
}

// accept creates the requested endpoint's QP on the request's id and accepts.
func (l *CMListener) accept(dev *device.Device, eps []*Endpoint, ev verbs.CMEvent) error {
	p := CMPrivate{Index: uint32(l.next), Count: uint32(len(eps))}
	if l.Perftest {
		l.next++
	} else if pp, err := parseCMPrivate(ev.PrivateData); err != nil {
		return err
	} else {
		p = pp
	}
	if int(p.Count) != len(eps) || int(p.Index) >= len(eps) {
		return fmt.Errorf("rdma_cm: the client connects QP %d of %d, the test has %d", p.Index, p.Count, len(eps))
	}
	ep := eps[p.Index]
	if ep.CMID != nil {
		return fmt.Errorf("rdma_cm: QP %d requested twice", p.Index)
	}
	if !ev.ID.UsesContext(dev.Ctx) {
		return fmt.Errorf("rdma_cm: request for QP %d arrived on %s, the test runs on %s", p.Index, ev.ID.DeviceName(), dev.Ctx.Name())
	}
	ep.setupStart = time.Now()
	if err := ep.createQP(ev.ID); err != nil {
		return err
	}
	ep.CMID = ev.ID
	if err := ep.setAckTimeout(); err != nil {
		return err
	}
	rd := ep.maxRdAtomic()
	ep.RdDepth = ep.initDepth(max(ev.ResponderResources, 1))
	return ev.ID.Accept(verbs.ConnParam{ResponderResources: min(rd, max(ev.InitiatorDepth, 1)), InitiatorDepth: ep.RdDepth,
		RetryCount: ep.Spec.RetryCount, RNRRetryCount: ep.Spec.RNRRetry})
}

func endpointOf(eps []*Endpoint, id *verbs.CMID) *Endpoint {
	for _, ep := range eps {
		if ep.CMID == id && id != nil {
			return ep
		}
	}
	return nil
}

// CMGIDReason says why rdma_cm's GID is the one the QPs use.
func CMGIDReason(dst netip.AddrPort) string {
	return "chosen by rdma_cm for " + dst.Addr().String()
}

// setAckTimeout gives the rdma_cm QP the spec's ACK timeout (--qp-timeout)
// instead of the one rdma_cm derives from the route. iWARP has none: TCP
// retransmits below it.
func (e *Endpoint) setAckTimeout() error {
	if e.Dev.Ctx.IsIWARP() {
		return nil
	}
	return e.CMID.SetAckTimeout(e.Spec.QPTimeout)
}
