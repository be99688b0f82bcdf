package verbs

/*
#include "cm.h"
*/
import "C"

import (
	"syscall"
	"time"
)

// UD through rdma_cm (as perftest's -c UD -R connects): ids of rdma_cm's UDP
// port space (RDMA_PS_UDP) carry UD QPs. The client's Connect is a SIDR
// request and the server's Accept the SIDR reply, which names the server's QP;
// the client's ESTABLISHED event brings the server's QP number, Q_Key and
// address handle (CMUDParam). The server learns nothing of the client from
// rdma_cm: the client has to send it a first message. rdma_create_qp moves a
// UD QP straight to RTS with the Q_Key rdma_cm chose (CMUDPQKey).

// CMUDPQKey is the Q_Key the kernel's rdma_cm gives the QPs of its UDP port
// space ids (RDMA_UDP_QKEY), and the one a SIDR reply names.
const CMUDPQKey = 0x01234567

// CMUDParam is what a UD connection's ESTABLISHED event says of the peer:
// its QP number, its Q_Key, and the address handle attributes to reach it.
type CMUDParam struct {
	QPN, QKey uint32
	AH        AHAttr
}

// udParam converts a UD event's parameters (nil when it has none).
func udParam(ev *C.rb_cm_event) *CMUDParam {
	if ev.ud == 0 {
		return nil
	}
	p := &CMUDParam{QPN: uint32(ev.ud_qpn), QKey: uint32(ev.ud_qkey), AH: AHAttr{
		Port: int(ev.ud_port), DLID: uint16(ev.ud_dlid), UseGRH: ev.ud_is_global != 0, SGIDIndex: int(ev.ud_sgid_index),
		HopLimit: int(ev.ud_hop_limit), TrafficClass: int(ev.ud_tclass), SL: int(ev.ud_sl)}}
	for i := range p.AH.DGID {
		p.AH.DGID[i] = byte(ev.ud_dgid[i])
	}
	return p
}

// CreateUDPID creates an id of rdma_cm's UDP port space (RDMA_PS_UDP), whose
// QP (CreateQP) is UD. Connect it with ConnectUD; accept its requests with
// Accept.
func (c *EventChannel) CreateUDPID() (*CMID, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	var id *C.struct_rdma_cm_id
	if rc, err := C.rdma_create_id(c.ch, &id, nil, C.RDMA_PS_UDP); rc != 0 {
		return nil, &Error{Op: "rdma_create_id", Detail: "RDMA_PS_UDP", Err: err}
	}
	return c.track(id)
}

// ConnectUD sends a SIDR request for the UDP port space id's UD QP and waits
// until deadline for ESTABLISHED, returning the server's QP number, Q_Key and
// address. A rejection or an unreachable peer gives an *EventError.
func (id *CMID) ConnectUD(deadline time.Time) (CMUDParam, error) {
	if rc := C.rb_cm_connect(id.id, nil, 0, 0, 0, 7, 7); rc != 0 {
		return CMUDParam{}, &Error{Op: "rdma_connect", Detail: "UD (SIDR request)", Err: syscall.Errno(rc)}
	}
	ev, err := id.await("rdma_connect (UD)", CMEventEstablished, deadline, nil)
	if err != nil {
		return CMUDParam{}, err
	}
	if ev.UD == nil {
		return CMUDParam{}, &Error{Op: "rdma_connect", Detail: "ESTABLISHED without UD parameters: not a UDP port space id (CreateUDPID)", Err: syscall.EPROTO}
	}
	return *ev.UD, nil
}
