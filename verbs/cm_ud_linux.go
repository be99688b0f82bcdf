package verbs

/*
#include "cm.h"
*/
import "C"

import (
	"syscall"
	"time"
	"unsafe"
)

// UD through rdma_cm (perftest's -c UD -R): a UDP port space id's UD QP, in
// RTS with CMUDPQKey from rdma_create_qp; ConnectUD sends a SIDR request, Accept
// the reply; the server learns nothing of the client (it must send a message).

// CMUDPQKey is the Q_Key the kernel's rdma_cm gives its UDP port space QPs
// (RDMA_UDP_QKEY), the one a SIDR reply names.
const CMUDPQKey = 0x01234567

// CMUDParam is a UD ESTABLISHED event's peer: QPN, Q_Key, and its address.
type CMUDParam struct {
	QPN, QKey uint32
	AH        AHAttr
}

// udParam converts a UD event's parameters (nil when it has none).
func udParam(ev *C.rb_cm_event) *CMUDParam {
	if ev.ud == 0 {
		return nil
	}
	p := &CMUDParam{QPN: uint32(ev.ud_qpn), QKey: uint32(ev.ud_qkey), AH: AHAttr{Port: int(ev.ud_port), DLID: uint16(ev.ud_dlid),
		UseGRH: ev.ud_is_global != 0, SGIDIndex: int(ev.ud_sgid_index), HopLimit: int(ev.ud_hop_limit), TrafficClass: int(ev.ud_tclass),
		SL: int(ev.ud_sl)}}
	copy(p.AH.DGID[:], C.GoBytes(unsafe.Pointer(&ev.ud_dgid[0]), 16))
	return p
}

// CreateUDPID creates an id of rdma_cm's UDP port space, whose QP (CreateQP)
// is UD. Connect it with ConnectUD; accept its requests with Accept.
func (c *EventChannel) CreateUDPID() (*CMID, error) { return c.createID(C.RDMA_PS_UDP, "RDMA_PS_UDP") }

// ConnectUD sends a SIDR request for the id's UD QP and waits until deadline
// for ESTABLISHED, returning the server's QPN, Q_Key and address. A
// rejection or an unreachable peer gives an *EventError.
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
