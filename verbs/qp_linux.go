package verbs

/*
#include "shim.h"
#include <rdma/rdma_cma.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"syscall"
)

// QPType is enum ibv_qp_type.
type QPType int

// QP types.
const (
	QPTypeRC QPType = C.IBV_QPT_RC
	QPTypeUC QPType = C.IBV_QPT_UC
	QPTypeUD QPType = C.IBV_QPT_UD
)

func (t QPType) String() string {
	switch t {
	case QPTypeRC:
		return "RC"
	case QPTypeUC:
		return "UC"
	case QPTypeUD:
		return "UD"
	}
	return fmt.Sprintf("QPType(%d)", int(t))
}

// QPCaps are queue sizes: requested in QPConfig, granted in QP.Caps.
type QPCaps struct {
	MaxSendWR     int `json:"max_send_wr"`
	MaxRecvWR     int `json:"max_recv_wr"`
	MaxSendSGE    int `json:"max_send_sge"`
	MaxRecvSGE    int `json:"max_recv_sge"`
	MaxInlineData int `json:"max_inline_data"` // bytes
}

// QPConfig describes a QP to create.
type QPConfig struct {
	Type   QPType
	SendCQ *CQ
	RecvCQ *CQ
	Caps   QPCaps
	// SigAll signals every send work request (sq_sig_all).
	SigAll bool
	// SRQ, when set, is the shared receive queue the QP's receives come
	// from (ibv_qp_init_attr.srq): the QP has no receive queue of its own
	// (Caps.MaxRecvWR is ignored) and QP.PostRecv is refused. It must stay
	// open until the QP is closed.
	SRQ *SRQ
}

// QP is a queue pair (struct ibv_qp).
type QP struct {
	pd     *PD
	qp     *C.struct_ibv_qp
	typ    QPType
	caps   QPCaps
	send   *CQ
	recv   *CQ
	srq    *SRQ // the shared receive queue, or nil
	closed bool
	opsMu  sync.Mutex
	ops    map[uint64]Opcode // signaled control-path posts by wr_id
	cm     *CMID             // the rdma_cm id that created the QP, or nil
}

// CreateQP calls ibv_create_qp. Limits above the device's give an error
// naming the requested values and the device limits.
func (p *PD) CreateQP(cfg QPConfig) (*QP, error) {
	if cfg.SendCQ == nil || cfg.RecvCQ == nil {
		return nil, fmt.Errorf("verbs: CreateQP needs a send and a receive CQ")
	}
	pd, err := p.acquire()
	if err != nil {
		return nil, err
	}
	srq, err := cfg.acquireSRQ()
	if err != nil {
		p.release()
		return nil, err
	}
	caps, sig := cfg.cCaps()
	qp, err := C.rb_create_qp(pd, cfg.SendCQ.cq, cfg.RecvCQ.cq, srq, C.int(cfg.Type), sig, &caps)
	if qp == nil {
		p.release()
		cfg.SRQ.releaseQP()
		return nil, &Error{Op: "ibv_create_qp", Detail: cfg.refusedDetail(p.ctx), Err: err}
	}
	return newQP(p, qp, cfg, &caps, nil), nil
}

// refusedDetail describes a QP the device refused to create: what was
// asked, and the device's limits when ctx can be queried (createQPDetail).
func (cfg QPConfig) refusedDetail(ctx *Context) string {
	if da, err := ctx.QueryDevice(); err == nil {
		return createQPDetail(cfg, &da)
	}
	return createQPDetail(cfg, nil)
}

// createQPDetail is refusedDetail with the device's attributes (nil: not
// known). Within max_qp_wr, the usable send queue depth still depends on
// the device: mlx5 counts the send queue in 64-byte WQE basic blocks, and a
// UD WQE, or one with inline data, takes several, so a depth below
// max_qp_wr may not fit. The detail then says so rather than blame
// max_qp_wr.
func createQPDetail(cfg QPConfig, da *DeviceAttr) string {
	d := fmt.Sprintf("%s, send_wr %d, recv_wr %d, inline %d%s", cfg.Type, cfg.Caps.MaxSendWR, cfg.Caps.MaxRecvWR, cfg.Caps.MaxInlineData, cfg.srqDetail())
	switch {
	case da == nil:
		return d
	case cfg.Caps.MaxSendWR > da.MaxQPWR || cfg.Caps.MaxRecvWR > da.MaxQPWR || max(cfg.Caps.MaxSendSGE, 1) > da.MaxSGE:
		return d + fmt.Sprintf("; device limits: max_qp_wr %d, max_sge %d", da.MaxQPWR, da.MaxSGE)
	}
	return d + fmt.Sprintf("; the tx depth (send_wr %d) is within max_qp_wr %d, but the inline size (%d bytes) and the QP type (%s) "+
		"shrink the usable send queue depth on this device (mlx5 counts it in 64-byte blocks, several per work request): "+
		"lower the tx depth or the inline size", cfg.Caps.MaxSendWR, da.MaxQPWR, cfg.Caps.MaxInlineData, cfg.Type)
}

// acquireSRQ counts the QP about to be created with cfg.SRQ and returns the
// C SRQ (nil without one); undo with cfg.SRQ.releaseQP.
func (cfg QPConfig) acquireSRQ() (*C.struct_ibv_srq, error) {
	if cfg.SRQ == nil {
		return nil, nil
	}
	if cfg.SRQ.pd.ctx != nil && cfg.SendCQ.ctx != nil && cfg.SRQ.pd.ctx != cfg.SendCQ.ctx {
		return nil, fmt.Errorf("verbs: the SRQ is from %s, the QP's CQs from %s", cfg.SRQ.pd.ctx.Name(), cfg.SendCQ.ctx.Name())
	}
	return cfg.SRQ.acquire()
}

// srqDetail names the SRQ in errors ("" without one).
func (cfg QPConfig) srqDetail() string {
	if cfg.SRQ == nil {
		return ""
	}
	return fmt.Sprintf(", SRQ of %d receives", cfg.SRQ.maxWR)
}

// cCaps is the C form of cfg's requested sizes (at least one SGE each way)
// and of its sq_sig_all.
func (cfg QPConfig) cCaps() (C.rb_qp_caps, C.int) {
	caps := C.rb_qp_caps{max_send_wr: C.uint32_t(cfg.Caps.MaxSendWR), max_recv_wr: C.uint32_t(cfg.Caps.MaxRecvWR),
		max_send_sge: C.uint32_t(max(cfg.Caps.MaxSendSGE, 1)), max_recv_sge: C.uint32_t(max(cfg.Caps.MaxRecvSGE, 1)),
		max_inline_data: C.uint32_t(cfg.Caps.MaxInlineData)}
	if cfg.SigAll {
		return caps, 1
	}
	return caps, 0
}

// newQP wraps a created QP with the sizes granted (caps) and registers it
// for completion error reports; cm is the rdma_cm id that owns it, or nil.
func newQP(p *PD, qp *C.struct_ibv_qp, cfg QPConfig, caps *C.rb_qp_caps, cm *CMID) *QP {
	out := &QP{pd: p, qp: qp, typ: cfg.Type, send: cfg.SendCQ, recv: cfg.RecvCQ, srq: cfg.SRQ, ops: map[uint64]Opcode{}, cm: cm,
		caps: QPCaps{MaxSendWR: int(caps.max_send_wr), MaxRecvWR: int(caps.max_recv_wr), MaxSendSGE: int(caps.max_send_sge),
			MaxRecvSGE: int(caps.max_recv_sge), MaxInlineData: int(caps.max_inline_data)}}
	qpRegistry.Store(out.QPN(), out)
	return out
}

// qpRegistry maps QP numbers to open QPs, so a failed completion polled from
// a CQ can name the operation that was posted (an error completion's own
// opcode field is undefined).
var qpRegistry sync.Map

// maxTrackedOps bounds the wr_id -> opcode memory of control-path posts.
const maxTrackedOps = 4096

func (q *QP) trackOp(wrID uint64, op Opcode) {
	q.opsMu.Lock()
	defer q.opsMu.Unlock()
	if len(q.ops) >= maxTrackedOps {
		clear(q.ops)
	}
	q.ops[wrID] = op
}

// postedOp returns and forgets the opcode posted with wrID on QP qpn.
func postedOp(qpn uint32, wrID uint64) (Opcode, bool) {
	v, ok := qpRegistry.Load(qpn)
	if !ok {
		return 0, false
	}
	q := v.(*QP)
	q.opsMu.Lock()
	defer q.opsMu.Unlock()
	op, ok := q.ops[wrID]
	delete(q.ops, wrID)
	return op, ok
}

// QPN is the QP number.
func (q *QP) QPN() uint32 { return uint32(q.qp.qp_num) }

// Type is the transport type.
func (q *QP) Type() QPType { return q.typ }

// Caps are the sizes the device granted (max_inline_data included).
func (q *QP) Caps() QPCaps { return q.caps }

// SendCQ and RecvCQ are the CQs the QP was created with.
func (q *QP) SendCQ() *CQ { return q.send }

// RecvCQ is the receive CQ.
func (q *QP) RecvCQ() *CQ { return q.recv }

// SRQ is the shared receive queue the QP was created with, or nil.
func (q *QP) SRQ() *SRQ { return q.srq }

// ToInit moves the QP from RESET to INIT on port with the remote access the
// peer may use (only what the test needs). A UD QP gets DefaultQKey.
func (q *QP) ToInit(port int, access Access) error {
	return q.ToInitQKey(port, access, DefaultQKey)
}

// ToInitQKey is ToInit with the Q_Key of a UD QP (access is ignored for UD,
// qkey for RC and UC).
func (q *QP) ToInitQKey(port int, access Access, qkey uint32) error {
	if rc := C.rb_qp_to_init(q.qp, C.uint8_t(port), C.int(access), C.uint32_t(qkey)); rc != 0 {
		return &Error{Op: "ibv_modify_qp INIT", Detail: fmt.Sprintf("%s, port %d, access %s", q.typ, port, access), Err: syscall.Errno(rc)}
	}
	return nil
}

// RTRAttr holds what moving to RTR needs: the remote QP's address.
type RTRAttr struct {
	Port            int
	PathMTU         int // bytes: 256..4096
	DestQPN         uint32
	RQPSN           uint32
	DLID            uint16
	UseGRH          bool // required on RoCE
	DGID            GID
	SGIDIndex       int
	HopLimit        int // 0 means 64
	TrafficClass    int
	SL              int
	MaxDestRdAtomic int // responder resources for incoming READ/atomic
	MinRNRTimer     int // 0 means 12 (0.64 ms)
}

// ToRTR moves the QP to RTR. On RoCE this resolves the peer's MAC and can
// take about a second to fail for an unreachable GID. A UC QP uses the
// address, path MTU, QPN and PSN only (no MaxDestRdAtomic, MinRNRTimer); a UD
// QP only changes state (its sends carry an address handle) and ignores a.
func (q *QP) ToRTR(a RTRAttr) error {
	if q.typ == QPTypeUD {
		if rc := C.rb_ud_to_rtr(q.qp); rc != 0 {
			return &Error{Op: "ibv_modify_qp RTR", Detail: "UD", Err: syscall.Errno(rc)}
		}
		return nil
	}
	mtu, err := MTUEnum(a.PathMTU)
	if err != nil {
		return fmt.Errorf("verbs: ibv_modify_qp RTR: %w", err)
	}
	rnr := a.MinRNRTimer
	if rnr == 0 {
		rnr = 12
	}
	g := grhOf(a.UseGRH, a.DGID, a.HopLimit)
	if rc := C.rb_qp_to_rtr(q.qp, C.uint8_t(a.Port), C.int(mtu), C.uint32_t(a.DestQPN), C.uint32_t(a.RQPSN&0xffffff),
		C.uint16_t(a.DLID), g.use, g.hi, g.lo, C.uint8_t(a.SGIDIndex), g.hop,
		C.uint8_t(a.TrafficClass), C.uint8_t(a.SL), C.uint8_t(a.MaxDestRdAtomic), C.uint8_t(rnr)); rc != 0 {
		return &Error{Op: "ibv_modify_qp RTR", Detail: fmt.Sprintf("%s, dest qpn 0x%x, dgid %s, sgid_index %d, path_mtu %d",
			q.typ, a.DestQPN, a.DGID, a.SGIDIndex, a.PathMTU), Err: syscall.Errno(rc)}
	}
	return nil
}

// grh is an address vector's global route header as the C shims take it.
type grh struct {
	use    C.int
	hi, lo C.uint64_t // the destination GID, big-endian halves
	hop    C.uint8_t
}

// grhOf converts a GRH; a hop limit of 0 means 64.
func grhOf(use bool, dgid GID, hopLimit int) grh {
	var g grh
	if use {
		g.use = 1
	}
	hi, lo := gidHalves(dgid)
	g.hi, g.lo = C.uint64_t(hi), C.uint64_t(lo)
	g.hop = C.uint8_t(hopLimit)
	if hopLimit == 0 {
		g.hop = 64
	}
	return g
}

func gidHalves(g GID) (hi, lo uint64) {
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(g[i])
		lo = lo<<8 | uint64(g[8+i])
	}
	return hi, lo
}

// RTSAttr holds what moving to RTS needs.
type RTSAttr struct {
	SQPSN       uint32
	Timeout     int // 4.096 µs × 2^Timeout per retry; 0 means 14 (≈ 67 ms)
	RetryCnt    int // 0 means 7
	RNRRetry    int // 7 retries forever; 0 means 7
	MaxRdAtomic int // outstanding READ/atomic as initiator
}

// ToRTS moves the QP to RTS. UC and UD QPs use SQPSN only.
func (q *QP) ToRTS(a RTSAttr) error {
	if q.typ == QPTypeUD {
		if rc := C.rb_ud_to_rts(q.qp, C.uint32_t(a.SQPSN&0xffffff)); rc != 0 {
			return &Error{Op: "ibv_modify_qp RTS", Detail: "UD", Err: syscall.Errno(rc)}
		}
		return nil
	}
	if a.Timeout == 0 {
		a.Timeout = 14
	}
	if a.RetryCnt == 0 {
		a.RetryCnt = 7
	}
	if a.RNRRetry == 0 {
		a.RNRRetry = 7
	}
	if rc := C.rb_qp_to_rts(q.qp, C.uint32_t(a.SQPSN&0xffffff), C.uint8_t(a.Timeout), C.uint8_t(a.RetryCnt),
		C.uint8_t(a.RNRRetry), C.uint8_t(a.MaxRdAtomic)); rc != 0 {
		return &Error{Op: "ibv_modify_qp RTS", Detail: fmt.Sprintf("%s, timeout %d, retry %d, max_rd_atomic %d", q.typ, a.Timeout, a.RetryCnt, a.MaxRdAtomic),
			Err: syscall.Errno(rc)}
	}
	return nil
}

// ToError moves the QP to ERR: outstanding work requests are flushed.
func (q *QP) ToError() error {
	if rc := C.rb_qp_to_err(q.qp); rc != 0 {
		return &Error{Op: "ibv_modify_qp ERR", Err: syscall.Errno(rc)}
	}
	return nil
}

// Opcode is enum ibv_wr_opcode: rdmabench's one vocabulary of operations.
// A work request posts one (SendWR.Op), an Engine measures one
// (EngineConfig.Op), a completion names one (WC.Opcode, with WC.Recv for a
// receive) and so does a failed one (WCError.Opcode).
type Opcode int

// Work request opcodes, with C's values.
const (
	OpWrite        Opcode = C.IBV_WR_RDMA_WRITE
	OpWriteWithImm Opcode = C.IBV_WR_RDMA_WRITE_WITH_IMM
	OpSend         Opcode = C.IBV_WR_SEND
	OpSendWithImm  Opcode = C.IBV_WR_SEND_WITH_IMM
	OpRead         Opcode = C.IBV_WR_RDMA_READ
	OpCmpSwap      Opcode = C.IBV_WR_ATOMIC_CMP_AND_SWP
	OpFetchAdd     Opcode = C.IBV_WR_ATOMIC_FETCH_AND_ADD
	// OpUnknown is not a C value: the operation of a completion is not
	// known (a failed completion's own opcode is undefined, and a receive
	// or an untracked work request leaves no record), or the completion's
	// opcode has no work request counterpart here (e.g. IBV_WC_BIND_MW).
	OpUnknown Opcode = -1
)

func (o Opcode) String() string {
	switch o {
	case OpWrite:
		return "RDMA_WRITE"
	case OpWriteWithImm:
		return "RDMA_WRITE_WITH_IMM"
	case OpSend:
		return "SEND"
	case OpSendWithImm:
		return "SEND_WITH_IMM"
	case OpRead:
		return "RDMA_READ"
	case OpCmpSwap:
		return "ATOMIC_CMP_AND_SWP"
	case OpFetchAdd:
		return "ATOMIC_FETCH_AND_ADD"
	case OpUnknown:
		return "unknown"
	}
	return fmt.Sprintf("Opcode(%d)", int(o))
}

// SendWR is one send-queue work request (control path and tests; the
// benchmark posts from C).
type SendWR struct {
	WRID       uint64
	Op         Opcode
	MR         *MR
	Offset     int // into MR, bytes
	Len        int // bytes
	RemoteAddr uint64
	RKey       uint32
	Imm        uint32 // host order
	CompareAdd uint64
	Swap       uint64
	Signaled   bool
	Inline     bool
}

// PostSend posts one send work request on an RC or UC QP (UD: PostSendUD;
// a UD work request without an address handle crashes some providers).
func (q *QP) PostSend(wr SendWR) error {
	if q.closed {
		return ErrClosed
	}
	switch {
	case q.typ == QPTypeUD:
		return fmt.Errorf("verbs: post %s on a UD QP: use PostSendUD (UD sends need an address handle)", wr.Op)
	case q.typ == QPTypeUC && wr.Op != OpSend && wr.Op != OpSendWithImm && wr.Op != OpWrite && wr.Op != OpWriteWithImm:
		return fmt.Errorf("verbs: %s is not supported on a UC QP (SEND and RDMA WRITE only)", wr.Op)
	}
	flags, err := q.prepare(wr)
	if err != nil {
		return err
	}
	if rc := C.rb_post_send(q.qp, C.int(wr.Op), C.uint64_t(wr.WRID), C.uint64_t(wr.MR.addr+uint64(wr.Offset)), C.uint32_t(wr.Len),
		C.uint32_t(wr.MR.lkey), C.uint64_t(wr.RemoteAddr), C.uint32_t(wr.RKey), flags, C.uint32_t(wr.Imm),
		C.uint64_t(wr.CompareAdd), C.uint64_t(wr.Swap)); rc != 0 {
		return &Error{Op: "ibv_post_send", Detail: fmt.Sprintf("%s %d bytes", wr.Op, wr.Len), Err: syscall.Errno(rc)}
	}
	return nil
}

// prepare checks wr's buffer against its MR, remembers the opcode of a
// signaled request (for error completions) and returns the send flags.
func (q *QP) prepare(wr SendWR) (C.int, error) {
	if wr.Offset < 0 || wr.Len < 0 || uint64(wr.Offset+wr.Len) > wr.MR.length {
		return 0, fmt.Errorf("verbs: post %s: %d bytes at offset %d outside the %d-byte MR", wr.Op, wr.Len, wr.Offset, wr.MR.length)
	}
	flags := 0
	if wr.Signaled {
		flags |= C.IBV_SEND_SIGNALED
		q.trackOp(wr.WRID, wr.Op)
	}
	if wr.Inline {
		flags |= C.IBV_SEND_INLINE
	}
	return C.int(flags), nil
}

// PostRecv posts one receive of length bytes at offset into mr.
func (q *QP) PostRecv(wrID uint64, mr *MR, offset, length int) error {
	if q.closed {
		return ErrClosed
	}
	if q.srq != nil {
		return fmt.Errorf("verbs: post recv on QP 0x%x, which takes its receives from an SRQ: post to the SRQ (SRQ.PostRecv)", q.QPN())
	}
	if offset < 0 || length < 0 || uint64(offset+length) > mr.length {
		return fmt.Errorf("verbs: post recv: %d bytes at offset %d outside the %d-byte MR", length, offset, mr.length)
	}
	if rc := C.rb_post_recv(q.qp, C.uint64_t(wrID), C.uint64_t(mr.addr+uint64(offset)), C.uint32_t(length), C.uint32_t(mr.lkey)); rc != 0 {
		return &Error{Op: "ibv_post_recv", Detail: fmt.Sprintf("%d bytes", length), Err: syscall.Errno(rc)}
	}
	return nil
}

// Close destroys the QP. Idempotent; nil on a nil *QP.
func (q *QP) Close() error {
	if q == nil || q.closed {
		return nil
	}
	q.closed = true
	defer q.pd.release()
	defer q.srq.releaseQP() // after the QP is destroyed
	qpRegistry.CompareAndDelete(q.QPN(), q)
	if q.cm != nil {
		C.rdma_destroy_qp(q.cm.id)
		return nil
	}
	if rc := C.ibv_destroy_qp(q.qp); rc != 0 {
		return &Error{Op: "ibv_destroy_qp", Err: syscall.Errno(rc)}
	}
	return nil
}
