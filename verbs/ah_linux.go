package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"syscall"
)

// GRHSize is the Global Routing Header that precedes every UD receive's
// payload: a UD receive buffer needs the message size plus GRHSize bytes.
const GRHSize = 40

// DefaultQKey is the Q_Key ToInit gives UD QPs.
const DefaultQKey = 0x11111111

// AHAttr is the address of a remote port, as an address handle holds it.
type AHAttr struct {
	Port         int
	DLID         uint16
	UseGRH       bool // required on RoCE
	DGID         GID
	SGIDIndex    int
	HopLimit     int // 0 means 64
	TrafficClass int
	SL           int
}

// AH is an address handle (struct ibv_ah): where UD sends go.
type AH struct {
	pd     *PD
	ah     *C.struct_ibv_ah
	attr   AHAttr
	closed bool
}

// CreateAH calls ibv_create_ah. On RoCE this resolves the peer's MAC.
func (p *PD) CreateAH(a AHAttr) (*AH, error) {
	pd, err := p.acquire()
	if err != nil {
		return nil, err
	}
	g := grhOf(a.UseGRH, a.DGID, a.HopLimit)
	ah, err := C.rb_create_ah(pd, C.uint8_t(a.Port), C.uint16_t(a.DLID), g.use, g.hi, g.lo,
		C.uint8_t(a.SGIDIndex), g.hop, C.uint8_t(a.TrafficClass), C.uint8_t(a.SL))
	if ah == nil {
		p.release()
		return nil, &Error{Op: "ibv_create_ah", Detail: fmt.Sprintf("port %d, dlid %d, dgid %s, sgid_index %d", a.Port, a.DLID, a.DGID, a.SGIDIndex),
			Err: err}
	}
	return &AH{pd: p, ah: ah, attr: a}, nil
}

// Attr is what the AH was created with.
func (h *AH) Attr() AHAttr { return h.attr }

// Close destroys the AH. Idempotent; nil on a nil *AH.
func (h *AH) Close() error {
	if h == nil || h.closed {
		return nil
	}
	h.closed = true
	defer h.pd.release()
	if rc := C.ibv_destroy_ah(h.ah); rc != 0 {
		return &Error{Op: "ibv_destroy_ah", Err: syscall.Errno(rc)}
	}
	return nil
}

// UDDest is where a UD send goes: the peer's address handle, QP number and Q_Key.
type UDDest struct {
	AH   *AH
	QPN  uint32
	QKey uint32
}

// PostSendUD posts one SEND (or SEND_WITH_IMM, when wr.Op says so) on a UD
// QP to dest. At most the path MTU fits in one UD message.
func (q *QP) PostSendUD(wr SendWR, dest UDDest) error {
	if q.closed {
		return ErrClosed
	}
	if q.typ != QPTypeUD {
		return fmt.Errorf("verbs: PostSendUD on a %s QP", q.typ)
	}
	if dest.AH == nil || dest.AH.closed {
		return fmt.Errorf("verbs: PostSendUD needs an open address handle")
	}
	if wr.Op != OpSend && wr.Op != OpSendWithImm {
		return fmt.Errorf("verbs: UD supports SEND only, not %s", wr.Op)
	}
	flags, err := q.prepare(wr)
	if err != nil {
		return err
	}
	imm := 0
	if wr.Op == OpSendWithImm {
		imm = 1
	}
	if rc := C.rb_post_send_ud(q.qp, dest.AH.ah, C.uint32_t(dest.QPN), C.uint32_t(dest.QKey), C.uint64_t(wr.WRID),
		C.uint64_t(wr.MR.addr+uint64(wr.Offset)), C.uint32_t(wr.Len), C.uint32_t(wr.MR.lkey), flags, C.int(imm),
		C.uint32_t(wr.Imm)); rc != 0 {
		return &Error{Op: "ibv_post_send", Detail: fmt.Sprintf("UD %s %d bytes to qpn 0x%x", wr.Op, wr.Len, dest.QPN), Err: syscall.Errno(rc)}
	}
	return nil
}
