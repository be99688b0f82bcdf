package verbs

/*
#include <stdlib.h>
#include "cm.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rdma_cm (librdmacm) creates and connects QPs from IP addresses: the
// connection manager resolves the device, port, GID and path, and exchanges
// QP numbers and PSNs itself. It is the only way to connect on iWARP.

// ErrNoCM: the kernel has no rdma_cm user access (/dev/infiniband/rdma_cm is
// missing: load rdma_ucm).
var ErrNoCM = errors.New("rdma_cm not available")

// cmDevicePath is the rdma_cm character device (the rdma_ucm module).
const cmDevicePath = "/dev/infiniband/rdma_cm"

// OpenCM returns the context librdmacm opened for the named device (""= the
// first), which is the one rdma_cm ids resolve to: PDs, CQs and MRs used with
// CMID.CreateQP must come from it. librdmacm owns the device: Close releases
// only this handle.
func OpenCM(name string) (*Context, error) {
	if _, err := os.Stat(cmDevicePath); err != nil {
		return nil, fmt.Errorf("%w: %s missing (modprobe rdma_ucm)", ErrNoCM, cmDevicePath)
	}
	var n C.int
	list, err := C.rdma_get_devices(&n)
	if list == nil {
		return nil, &Error{Op: "rdma_get_devices", Err: err}
	}
	defer C.rdma_free_devices(list)
	var names []string
	for i := 0; i < int(n); i++ {
		ctx := C.rb_ctx_at(list, C.int(i))
		dn := C.GoString(C.ibv_get_device_name(ctx.device))
		if name == "" || dn == name {
			return &Context{ctx: ctx, name: dn, cm: true}, nil
		}
		names = append(names, dn)
	}
	if n == 0 {
		return nil, ErrNoDevices
	}
	return nil, &DeviceNotFoundError{Name: name, Available: names}
}

// CM reports whether the context is librdmacm's (OpenCM).
func (c *Context) CM() bool { return c.cm }

// CMEventType is enum rdma_cm_event_type.
type CMEventType int

// rdma_cm events rdmabench handles.
const (
	CMEventAddrResolved   CMEventType = C.RDMA_CM_EVENT_ADDR_RESOLVED
	CMEventAddrError      CMEventType = C.RDMA_CM_EVENT_ADDR_ERROR
	CMEventRouteResolved  CMEventType = C.RDMA_CM_EVENT_ROUTE_RESOLVED
	CMEventRouteError     CMEventType = C.RDMA_CM_EVENT_ROUTE_ERROR
	CMEventConnectRequest CMEventType = C.RDMA_CM_EVENT_CONNECT_REQUEST
	CMEventConnectError   CMEventType = C.RDMA_CM_EVENT_CONNECT_ERROR
	CMEventUnreachable    CMEventType = C.RDMA_CM_EVENT_UNREACHABLE
	CMEventRejected       CMEventType = C.RDMA_CM_EVENT_REJECTED
	CMEventEstablished    CMEventType = C.RDMA_CM_EVENT_ESTABLISHED
	CMEventDisconnected   CMEventType = C.RDMA_CM_EVENT_DISCONNECTED
	CMEventDeviceRemoval  CMEventType = C.RDMA_CM_EVENT_DEVICE_REMOVAL
	CMEventTimewaitExit   CMEventType = C.RDMA_CM_EVENT_TIMEWAIT_EXIT
)

// String is rdma_event_str's name, e.g. "RDMA_CM_EVENT_ESTABLISHED".
func (t CMEventType) String() string {
	return C.GoString(C.rdma_event_str(C.enum_rdma_cm_event_type(t)))
}

// CMEvent is one rdma_cm event, copied and already acknowledged.
type CMEvent struct {
	Type CMEventType
	// Status is the event's status: a negative errno, or for REJECTED the
	// reject reason.
	Status int
	// ID is the id the event is for; on CONNECT_REQUEST a new id for the
	// incoming connection (Close it, or Reject it).
	ID *CMID
	// InitiatorDepth and ResponderResources are the peer's (connection events; 0 on a UDP port space id).
	InitiatorDepth, ResponderResources int
	// PrivateData is the peer's private data (connection events).
	PrivateData []byte
	// UD is the peer's QP number, Q_Key and address on ESTABLISHED for an
	// id of the UDP port space (CreateUDPID), nil otherwise.
	UD *CMUDParam
}

// EventError: an rdma_cm wait got an event other than the one expected, or
// an event with an error status.
type EventError struct {
	Op     string // what was waited for, e.g. "rdma_resolve_addr"
	Want   CMEventType
	Got    CMEventType
	Status int
}

func (e *EventError) Error() string {
	s := fmt.Sprintf("%s: got %s, want %s", e.Op, e.Got, e.Want)
	switch {
	case e.Got == CMEventRejected:
		s += fmt.Sprintf(" (reject reason %d%s)", e.Status, rejectReasons[e.Status])
	case e.Status < 0:
		s += fmt.Sprintf(" (status %d: %v)", e.Status, syscall.Errno(-e.Status))
	}
	return s
}

// rejectReasons explains the IB CM reject reasons a REJECTED event most
// often carries (IBTA table 112).
var rejectReasons = map[int]string{
	8:  ": invalid service ID, no listener on that port",
	28: ": consumer reject, the peer refused the request",
}

// Unwrap gives the event's errno, when it has one.
func (e *EventError) Unwrap() error {
	if e.Status < 0 && e.Got != CMEventRejected {
		return syscall.Errno(-e.Status)
	}
	return nil
}

// EventChannel is an rdma_cm event channel (struct rdma_event_channel) with a
// non-blocking fd: every wait on it has a deadline.
type EventChannel struct {
	mu     sync.Mutex
	ch     *C.struct_rdma_event_channel
	ids    map[*C.struct_rdma_cm_id]*CMID
	closed bool
}

// NewEventChannel creates an event channel. Close it after its ids.
func NewEventChannel() (*EventChannel, error) {
	if _, err := os.Stat(cmDevicePath); err != nil {
		return nil, fmt.Errorf("%w: %s missing (modprobe rdma_ucm)", ErrNoCM, cmDevicePath)
	}
	ch, err := C.rb_cm_channel()
	if ch == nil {
		return nil, &Error{Op: "rdma_create_event_channel", Err: err}
	}
	return &EventChannel{ch: ch, ids: map[*C.struct_rdma_cm_id]*CMID{}}, nil
}

// Close destroys the channel. It fails while ids created on it are open.
// Close is idempotent; nil on a nil *EventChannel.
func (c *EventChannel) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if n := len(c.ids); n > 0 {
		return fmt.Errorf("verbs: close rdma_cm event channel: %d ids still open", n)
	}
	c.closed = true
	C.rdma_destroy_event_channel(c.ch)
	return nil
}

func (c *EventChannel) track(id *C.struct_rdma_cm_id) (*CMID, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	out := &CMID{ch: c, id: id}
	c.ids[id] = out
	return out, nil
}

func (c *EventChannel) lookup(id *C.struct_rdma_cm_id) *CMID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids[id]
}

// CreateID creates an id for reliable connections (RDMA_PS_TCP, RC QPs).
func (c *EventChannel) CreateID() (*CMID, error) { return c.createID(C.RDMA_PS_TCP, "") }

// createID creates an id of port space ps (detail names it in errors).
func (c *EventChannel) createID(ps C.enum_rdma_port_space, detail string) (*CMID, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	var id *C.struct_rdma_cm_id
	if rc, err := C.rdma_create_id(c.ch, &id, nil, ps); rc != 0 {
		return nil, &Error{Op: "rdma_create_id", Detail: detail, Err: err}
	}
	return c.track(id)
}

// Next waits until deadline for the next event on the channel. The event is
// acknowledged before Next returns. A CONNECT_REQUEST brings a new id.
// Waiting ends early with ErrAborted once abort (if not nil) is closed.
func (c *EventChannel) Next(deadline time.Time, abort <-chan struct{}) (CMEvent, error) {
	fd := int32(C.rb_cm_fd(c.ch))
	for {
		var ev C.rb_cm_event
		rc := C.rb_cm_get_event(c.ch, &ev)
		if rc == 0 {
			return c.event(&ev)
		}
		if errno := syscall.Errno(rc); errno != syscall.EAGAIN && errno != syscall.EINTR {
			return CMEvent{}, &Error{Op: "rdma_get_cm_event", Err: errno}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return CMEvent{}, &Error{Op: "rdma_get_cm_event", Detail: "no rdma_cm event before the deadline", Err: ErrTimeout}
		}
		select {
		case <-abort:
			return CMEvent{}, ErrAborted
		default:
		}
		ms := int(min(left, 100*time.Millisecond) / time.Millisecond)
		if _, err := unix.Poll([]unix.PollFd{{Fd: fd, Events: unix.POLLIN}}, max(ms, 1)); err != nil && err != unix.EINTR {
			return CMEvent{}, &Error{Op: "poll rdma_cm channel", Err: err}
		}
	}
}

func (c *EventChannel) event(ev *C.rb_cm_event) (CMEvent, error) {
	out := CMEvent{Type: CMEventType(ev.event), Status: int(ev.status), InitiatorDepth: int(ev.initiator_depth),
		ResponderResources: int(ev.responder_resources)}
	if ev.private_len > 0 {
		out.PrivateData = C.GoBytes(unsafe.Pointer(&ev.private_data[0]), C.int(ev.private_len))
	}
	out.UD = udParam(ev)
	if out.Type == CMEventConnectRequest {
		id, err := c.track(ev.id)
		if err != nil {
			C.rdma_reject(ev.id, nil, 0)
			C.rdma_destroy_id(ev.id)
			return CMEvent{}, err
		}
		out.ID = id
		return out, nil
	}
	out.ID = c.lookup(ev.id)
	return out, nil
}

// CMID is an rdma_cm id (struct rdma_cm_id): one connection, or a listener.
type CMID struct {
	ch     *EventChannel
	id     *C.struct_rdma_cm_id
	qp     *QP
	closed bool
}

// Close destroys the id (a connected id disconnects). It fails while its QP
// is open. Close is idempotent; nil on a nil *CMID.
func (id *CMID) Close() error {
	if id == nil || id.closed {
		return nil
	}
	if id.qp != nil && !id.qp.closed {
		return fmt.Errorf("verbs: close rdma_cm id: its QP 0x%x is still open", id.qp.QPN())
	}
	id.closed = true
	id.ch.mu.Lock()
	delete(id.ch.ids, id.id)
	id.ch.mu.Unlock()
	if rc, err := C.rdma_destroy_id(id.id); rc != 0 {
		return &Error{Op: "rdma_destroy_id", Err: err}
	}
	return nil
}

func ipBytes(a netip.Addr) (b [16]C.uint8_t, v4 C.int) {
	a16 := a.As16()
	for i := range a16 {
		b[i] = C.uint8_t(a16[i])
	}
	if a.Unmap().Is4() {
		v4 = 1
	}
	return b, v4
}

// Bind binds the id to a local address and port (0: any free port).
func (id *CMID) Bind(ap netip.AddrPort) error {
	ip, v4 := ipBytes(ap.Addr())
	if rc := C.rb_cm_bind(id.id, &ip[0], v4, C.uint16_t(ap.Port())); rc != 0 {
		return &Error{Op: "rdma_bind_addr", Detail: ap.String(), Err: syscall.Errno(rc)}
	}
	return nil
}

// SetTOS sets the IP type of service (the GRH traffic class on RoCE) of the
// id's connection; call it before Resolve.
func (id *CMID) SetTOS(tos int) error {
	if rc := C.rb_cm_set_tos(id.id, C.uint8_t(tos)); rc != 0 {
		return &Error{Op: "rdma_set_option TOS", Detail: fmt.Sprint(tos), Err: syscall.Errno(rc)}
	}
	return nil
}

// SetAckTimeout sets the QP's local ACK timeout exponent (4.096 µs ×
// 2^timeout; RDMA_OPTION_ID_ACK_TIMEOUT) in place of the one rdma_cm derives
// from the route; call it before the QP reaches RTS (before Connect or Accept).
func (id *CMID) SetAckTimeout(timeout int) error {
	if rc := C.rb_cm_set_ack_timeout(id.id, C.uint8_t(timeout)); rc != 0 {
		return &Error{Op: "rdma_set_option ACK_TIMEOUT", Detail: fmt.Sprint(timeout), Err: syscall.Errno(rc)}
	}
	return nil
}

// Listen starts listening for connection requests on the bound address.
func (id *CMID) Listen(backlog int) error {
	if rc, err := C.rdma_listen(id.id, C.int(backlog)); rc != 0 {
		return &Error{Op: "rdma_listen", Err: err}
	}
	return nil
}

// LocalPort is the id's bound port.
func (id *CMID) LocalPort() int { return int(C.rb_cm_src_port(id.id)) }

// DeviceName is the name of the device the id is bound to ("" before its
// address is bound to a device or resolved).
func (id *CMID) DeviceName() string {
	v := C.rb_cm_verbs(id.id)
	if v == nil {
		return ""
	}
	return C.GoString(C.ibv_get_device_name(v.device))
}

// Port is the device port the id is bound to.
func (id *CMID) Port() int { return int(C.rb_cm_port(id.id)) }

// UsesContext reports whether the id is bound to ctx's device context (the
// one OpenCM returns), so PDs from ctx can back its QP.
func (id *CMID) UsesContext(ctx *Context) bool {
	raw, err := ctx.raw()
	return err == nil && raw == C.rb_cm_verbs(id.id)
}

// await waits for the id's next event and checks it is want.
func (id *CMID) await(op string, want CMEventType, deadline time.Time, abort <-chan struct{}) (CMEvent, error) {
	ev, err := id.ch.Next(deadline, abort)
	if err != nil {
		return ev, fmt.Errorf("%s: %w", op, err)
	}
	if ev.ID != id {
		if ev.Type == CMEventConnectRequest {
			ev.ID.Reject()
			ev.ID.Close()
		}
		return ev, fmt.Errorf("%s: unexpected %s for another id", op, ev.Type)
	}
	if ev.Type != want || ev.Status != 0 {
		return ev, &EventError{Op: op, Want: want, Got: ev.Type, Status: ev.Status}
	}
	return ev, nil
}

// Resolve resolves dst (and the route to it) from src (an invalid src lets
// the kernel choose), each step within timeout, and binds the id to the
// device that reaches dst. The id's channel must carry no other events
// meanwhile.
func (id *CMID) Resolve(src netip.Addr, dst netip.AddrPort, timeout time.Duration) error {
	sip, _ := ipBytes(src)
	dip, v4 := ipBytes(dst.Addr())
	hasSrc := C.int(0)
	if src.IsValid() {
		hasSrc = 1
	}
	ms := C.int(max(timeout/time.Millisecond, 1))
	deadline := time.Now().Add(timeout + time.Second)
	if rc := C.rb_cm_resolve_addr(id.id, &sip[0], hasSrc, &dip[0], v4, C.uint16_t(dst.Port()), ms); rc != 0 {
		return &Error{Op: "rdma_resolve_addr", Detail: dst.String(), Err: syscall.Errno(rc)}
	}
	if _, err := id.await("rdma_resolve_addr "+dst.String(), CMEventAddrResolved, deadline, nil); err != nil {
		return err
	}
	if rc, err := C.rdma_resolve_route(id.id, ms); rc != 0 {
		return &Error{Op: "rdma_resolve_route", Detail: dst.String() + " on " + id.DeviceName(), Err: err}
	}
	deadline = time.Now().Add(timeout + time.Second)
	_, err := id.await("rdma_resolve_route "+dst.String(), CMEventRouteResolved, deadline, nil)
	return err
}

// CreateQP creates the id's QP with rdma_create_qp on pd, which must come
// from the id's device context (OpenCM). The QP starts in INIT; Connect or
// Accept moves it to RTS. Close the QP before the id.
func (id *CMID) CreateQP(pd *PD, cfg QPConfig) (*QP, error) {
	if cfg.SendCQ == nil || cfg.RecvCQ == nil {
		return nil, fmt.Errorf("verbs: CreateQP needs a send and a receive CQ")
	}
	if id.qp != nil {
		return nil, fmt.Errorf("verbs: rdma_cm id already has QP 0x%x", id.qp.QPN())
	}
	if !id.UsesContext(pd.ctx) {
		return nil, fmt.Errorf("verbs: rdma_create_qp: the PD is from %s's verbs context, not the one rdma_cm bound the id to (%q): open the device with OpenCM",
			pd.ctx.Name(), id.DeviceName())
	}
	raw, err := pd.acquire()
	if err != nil {
		return nil, err
	}
	srq, err := cfg.acquireSRQ()
	if err != nil {
		pd.release()
		return nil, err
	}
	caps, sig := cfg.cCaps()
	if rc := C.rb_cm_create_qp(id.id, raw, cfg.SendCQ.cq, cfg.RecvCQ.cq, srq, C.int(cfg.Type), sig, &caps); rc != 0 {
		pd.release()
		cfg.SRQ.releaseQP()
		return nil, &Error{Op: "rdma_create_qp", Detail: cfg.refusedDetail(pd.ctx), Err: syscall.Errno(rc)}
	}
	q := newQP(pd, C.rb_cm_qp(id.id), cfg, &caps, id)
	id.qp = q
	return q, nil
}
