package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CQ is a completion queue (struct ibv_cq), optionally with a completion
// channel for event mode.
type CQ struct {
	ctx    *Context
	cq     *C.struct_ibv_cq
	ch     *C.struct_ibv_comp_channel
	cqe    int
	vector int // completion vector
	unack  C.uint
	closed bool
}

// CreateCQ creates a CQ with at least cqe entries. With channel=true it also
// creates a completion channel (its fd is non-blocking) for WaitEvent. Its
// completion vector is 0 (CreateCQVector).
func (c *Context) CreateCQ(cqe int, channel bool) (*CQ, error) {
	return c.CreateCQVector(cqe, channel, 0)
}

// CreateCQVector is CreateCQ on completion vector vector (the interrupt
// its events come on in event mode): 0..NumCompVectors()-1.
func (c *Context) CreateCQVector(cqe int, channel bool, vector int) (*CQ, error) {
	if n := c.NumCompVectors(); vector < 0 || (vector > 0 && vector >= n) {
		return nil, fmt.Errorf("verbs: completion vector %d out of range: %s has %d (0..%d)", vector, c.name, n, max(n-1, 0))
	}
	ctx, err := c.acquire()
	if err != nil {
		return nil, err
	}
	out := &CQ{ctx: c, vector: vector}
	if channel {
		ch, err := C.ibv_create_comp_channel(ctx)
		if ch == nil {
			c.release()
			return nil, &Error{Op: "ibv_create_comp_channel", Detail: c.name, Err: err}
		}
		if err := unix.SetNonblock(int(ch.fd), true); err != nil {
			C.ibv_destroy_comp_channel(ch)
			c.release()
			return nil, newError("fcntl(O_NONBLOCK)", err)
		}
		out.ch = ch
	}
	cq, err := C.ibv_create_cq(ctx, C.int(cqe), nil, out.ch, C.int(vector))
	if cq == nil {
		if out.ch != nil {
			C.ibv_destroy_comp_channel(out.ch)
		}
		c.release()
		return nil, &Error{Op: "ibv_create_cq", Detail: fmt.Sprintf("%d entries", cqe), Err: err}
	}
	out.cq = cq
	out.cqe = int(cq.cqe)
	return out, nil
}

// Size is the number of entries the device granted (at least what was asked).
func (q *CQ) Size() int { return q.cqe }

// Vector is the CQ's completion vector.
func (q *CQ) Vector() int { return q.vector }

// WC is a work completion reduced to the fields rdmabench uses. Its opcode
// (enum ibv_wc_opcode) is mapped onto the work requests' Opcode: a send
// queue completion names the local operation (IBV_WC_RDMA_WRITE: OpWrite); a
// receive completion (Recv) names the peer's operation that consumed the
// receive (IBV_WC_RECV: OpSend, or OpSendWithImm with HasImm;
// IBV_WC_RECV_RDMA_WITH_IMM: OpWriteWithImm). A send completion does not
// tell OpSendWithImm from OpSend, nor OpWriteWithImm from OpWrite: it names
// the latter. The opcode of a failed completion is undefined.
type WC struct {
	WRID      uint64
	Status    WCStatus
	Opcode    Opcode
	Recv      bool // a receive queue completion (IBV_WC_RECV bit)
	VendorErr uint32
	ByteLen   uint32
	QPN       uint32
	SrcQP     uint32 // UD receives: the sender's QP number
	Imm       uint32 // host order; valid when HasImm
	HasImm    bool
}

// Err returns nil for a successful completion and *WCError otherwise.
func (w WC) Err() error {
	if w.Status == WCSuccess {
		return nil
	}
	op := OpUnknown
	if o, ok := postedOp(w.QPN, w.WRID); ok {
		op = o
	}
	return &WCError{Status: w.Status, Opcode: op, VendorErr: w.VendorErr, WRID: w.WRID, QPN: w.QPN}
}

// PollOne polls for one completion (control path; the hot loops poll in C).
func (q *CQ) PollOne() (WC, bool, error) {
	if q.closed {
		return WC{}, false, ErrClosed
	}
	var w C.rb_wc
	n := C.rb_poll_one(q.cq, &w)
	if n < 0 {
		return WC{}, false, &Error{Op: "ibv_poll_cq", Detail: fmt.Sprintf("returned %d", int(n))}
	}
	if n == 0 {
		return WC{}, false, nil
	}
	hasImm := w.wc_flags&C.IBV_WC_WITH_IMM != 0
	op, recv := wcOpcode(uint32(w.opcode), hasImm)
	return WC{WRID: uint64(w.wr_id), Status: WCStatus(w.status), Opcode: op, Recv: recv,
		VendorErr: uint32(w.vendor_err), ByteLen: uint32(w.byte_len), QPN: uint32(w.qp_num), SrcQP: uint32(w.src_qp),
		Imm: uint32(w.imm_data), HasImm: hasImm}, true, nil
}

// wcOpcode maps a completion's enum ibv_wc_opcode onto Opcode (see WC);
// recv reports a receive queue completion.
func wcOpcode(op uint32, withImm bool) (_ Opcode, recv bool) {
	switch op {
	case C.IBV_WC_SEND:
		return OpSend, false
	case C.IBV_WC_RDMA_WRITE:
		return OpWrite, false
	case C.IBV_WC_RDMA_READ:
		return OpRead, false
	case C.IBV_WC_COMP_SWAP:
		return OpCmpSwap, false
	case C.IBV_WC_FETCH_ADD:
		return OpFetchAdd, false
	case C.IBV_WC_RECV:
		if withImm {
			return OpSendWithImm, true
		}
		return OpSend, true
	case C.IBV_WC_RECV_RDMA_WITH_IMM:
		return OpWriteWithImm, true
	}
	return OpUnknown, op&C.IBV_WC_RECV != 0
}

// Wait busy-polls until one completion arrives or timeout passes
// (ErrTimeout). A failed completion is returned as the WC plus its *WCError.
func (q *CQ) Wait(timeout time.Duration) (WC, error) {
	deadline := time.Now().Add(timeout)
	for i := 0; ; i++ {
		w, ok, err := q.PollOne()
		if err != nil {
			return WC{}, err
		}
		if ok {
			if w.Status == WCSuccess && !w.Recv {
				postedOp(w.QPN, w.WRID) // forget the tracked opcode
			}
			return w, w.Err()
		}
		if i%256 == 0 && time.Now().After(deadline) {
			return WC{}, fmt.Errorf("verbs: waiting for a completion: %w after %v", ErrTimeout, timeout)
		}
	}
}

// ReqNotify arms the CQ for the next completion event (ibv_req_notify_cq).
func (q *CQ) ReqNotify() error {
	if rc := C.ibv_req_notify_cq(q.cq, 0); rc != 0 {
		return &Error{Op: "ibv_req_notify_cq", Err: syscall.Errno(rc)}
	}
	return nil
}

// WaitEvent waits up to timeout for a completion event on the CQ's channel
// and acknowledges it; re-arm with ReqNotify before polling again.
func (q *CQ) WaitEvent(timeout time.Duration) error {
	if q.ch == nil {
		return fmt.Errorf("verbs: WaitEvent on a CQ without a completion channel")
	}
	deadline := time.Now().Add(timeout)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		if ms < 0 {
			return fmt.Errorf("verbs: waiting for a CQ event: %w after %v", ErrTimeout, timeout)
		}
		fds := []unix.PollFd{{Fd: int32(q.ch.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return newError("poll(comp_channel)", err)
		}
		if n == 0 {
			continue
		}
		var cq *C.struct_ibv_cq
		var cctx unsafe.Pointer
		if rc, err := C.ibv_get_cq_event(q.ch, &cq, &cctx); rc != 0 {
			if err == syscall.EAGAIN {
				continue
			}
			return newError("ibv_get_cq_event", err)
		}
		C.ibv_ack_cq_events(cq, 1)
		return nil
	}
}

// Close destroys the CQ and its channel. Destroy QPs using it first.
// Idempotent; nil on a nil *CQ.
func (q *CQ) Close() error {
	if q == nil || q.closed {
		return nil
	}
	q.closed = true
	defer q.ctx.release()
	var err error
	if rc := C.ibv_destroy_cq(q.cq); rc != 0 {
		err = &Error{Op: "ibv_destroy_cq", Err: syscall.Errno(rc)}
	}
	if q.ch != nil {
		if rc := C.ibv_destroy_comp_channel(q.ch); rc != 0 && err == nil {
			err = &Error{Op: "ibv_destroy_comp_channel", Err: syscall.Errno(rc)}
		}
	}
	return err
}
