package verbs

/*
#include <stdlib.h>
#include "mrbench.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

// RegBench times n ibv_reg_mr calls over the first length bytes of buf with
// access, each followed by ibv_dereg_mr, in one C loop, and returns each
// call's duration in ns (reg[i] and dereg[i] belong to pair i). With
// budget > 0 it stops early once budget has passed, after at least min(n, 2)
// pairs. On an error it returns the samples taken so far with the error.
//
// It checks RLIMIT_MEMLOCK first (*MemlockError) and, when access includes
// AccessOnDemand, the device's ODP support (*NotSupportedError, e.g. "ODP
// not supported by rxe0"). Lock the calling goroutine to its thread for
// steadier figures.
func (p *PD) RegBench(buf *Buffer, length int, access Access, n int, budget time.Duration) (reg, dereg []uint64, err error) {
	if buf == nil || buf.closed {
		return nil, nil, ErrClosed
	}
	if length <= 0 || length > len(buf.mem) {
		return nil, nil, fmt.Errorf("verbs: register %d bytes: buffer has %d bytes", length, len(buf.mem))
	}
	if n < 1 {
		return nil, nil, fmt.Errorf("verbs: registration benchmark needs at least 1 iteration (got %d)", n)
	}
	if access&AccessOnDemand != 0 {
		if err := p.ctx.CheckODP(0); err != nil {
			return nil, nil, err
		}
	}
	if err := CheckMemlock(uint64(length)); err != nil {
		return nil, nil, err
	}
	pd, err := p.acquire()
	if err != nil {
		return nil, nil, err
	}
	defer p.release()
	cr := (*C.uint64_t)(C.calloc(C.size_t(n), 8))
	cd := (*C.uint64_t)(C.calloc(C.size_t(n), 8))
	defer C.free(unsafe.Pointer(cr))
	defer C.free(unsafe.Pointer(cd))
	if cr == nil || cd == nil {
		return nil, nil, &Error{Op: "calloc", Detail: fmt.Sprintf("2 x %d samples", n), Err: syscall.ENOMEM}
	}
	var until int64
	if now := Now(); budget > 0 && budget.Nanoseconds() < 1<<62-now {
		until = now + budget.Nanoseconds()
	}
	// At most one registration exists at a time; count it while the loop runs.
	lockedBytes.Add(uint64(length))
	defer lockedBytes.Add(^(uint64(length) - 1))
	var st C.rb_mr_reg_status
	rc := C.rb_mr_reg_bench(pd, C.uint64_t(buf.Addr()), C.uint64_t(length), C.int(access), C.uint64_t(n), cr, cd, C.int64_t(until), &st)
	done := int(st.done)
	reg = append([]uint64(nil), unsafe.Slice((*uint64)(unsafe.Pointer(cr)), done)...)
	dereg = append([]uint64(nil), unsafe.Slice((*uint64)(unsafe.Pointer(cd)), done)...)
	detail := fmt.Sprintf("%d bytes, access %s, iteration %d", length, access, done)
	switch rc {
	case C.RB_OK:
		return reg, dereg, nil
	case C.RB_MR_ERR_REG:
		e := &Error{Op: "ibv_reg_mr", Detail: detail, Err: syscall.Errno(st.err_errno)}
		if e.Err == syscall.ENOMEM {
			e.Detail += "; ENOMEM usually means RLIMIT_MEMLOCK is too low (ulimit -l)"
		}
		return reg, dereg, e
	case C.RB_MR_ERR_DEREG:
		return reg, dereg, &Error{Op: "ibv_dereg_mr", Detail: detail, Err: syscall.Errno(st.err_errno)}
	}
	return reg, dereg, fmt.Errorf("verbs: registration loop returned %d", int(rc))
}

// MROpConfig sets up an MROpLoop: RDMA WRITEs of Size bytes from Buf to a
// passive peer over a connected RC QP, one at a time, each waited for.
type MROpConfig struct {
	QP  *QP
	Buf *Buffer // source of the WRITEs (from AllocBuffer); its first Size bytes are written
	// PerOp registers the source before and deregisters it after every WRITE
	// (ibv_reg_mr, post, completion, ibv_dereg_mr). Otherwise one MR over
	// the source is registered when the loop is created and reused: a pool.
	PerOp      bool
	Access     Access // of the registrations; 0 means AccessLocalWrite
	Size       int    // bytes per WRITE
	RemoteAddr uint64 // the peer's target area (at least Size bytes, REMOTE_WRITE)
	RKey       uint32
	Timeout    time.Duration // longest wait for one completion (no progress); 0 means 10 s
	Samples    int           // sample buffer capacity, entries
}

// MROpLoop runs the WRITE loop of MROpConfig in C. Its state and its sample
// buffer live in C memory; Close frees them and the pooled MR.
type MROpLoop struct {
	o      *C.rb_mr_op
	cfg    MROpConfig
	pd     *PD
	pool   *MR // pooled mode
	locked uint64
	closed bool
}

// NewMROpLoop checks cfg and allocates the loop's C state. In pooled mode it
// registers the pool MR; in per-op mode it checks RLIMIT_MEMLOCK for the
// per-operation registration. With AccessOnDemand it first checks that the
// device supports ODP for RC WRITE (*NotSupportedError otherwise).
func NewMROpLoop(cfg MROpConfig) (_ *MROpLoop, err error) {
	switch {
	case cfg.QP == nil || cfg.Buf == nil:
		return nil, fmt.Errorf("verbs: MR op loop needs a QP and a source buffer")
	case cfg.Buf.closed:
		return nil, ErrClosed
	case cfg.Size < 1 || cfg.Size > len(cfg.Buf.mem):
		return nil, fmt.Errorf("verbs: MR op loop: size %d bytes out of range 1..%d (the source buffer)", cfg.Size, len(cfg.Buf.mem))
	case cfg.Samples < 1:
		return nil, fmt.Errorf("verbs: MR op loop needs a sample buffer of at least 1 entry (got %d)", cfg.Samples)
	}
	if cfg.Access == 0 {
		cfg.Access = AccessLocalWrite
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	p := cfg.QP.pd
	if cfg.Access&AccessOnDemand != 0 {
		if err := p.ctx.CheckODP(ODPWrite); err != nil {
			return nil, err
		}
	}
	l := &MROpLoop{cfg: cfg, pd: p}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	pd, err := p.acquire()
	if err != nil {
		return nil, err
	}
	l.o = (*C.rb_mr_op)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_mr_op{}))))
	if l.o == nil {
		p.release()
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	o := l.o
	o.pd = pd
	if o.samples = (*C.uint64_t)(C.calloc(C.size_t(cfg.Samples), 8)); o.samples == nil {
		return nil, &Error{Op: "calloc", Detail: fmt.Sprintf("%d samples", cfg.Samples), Err: syscall.ENOMEM}
	}
	if cfg.PerOp {
		if err := CheckMemlock(uint64(cfg.Size)); err != nil {
			return nil, err
		}
		l.locked = uint64(cfg.Size) // at most one per-op registration at a time
		lockedBytes.Add(l.locked)
		o.per_op = 1
	} else {
		if l.pool, err = p.RegisterMR(cfg.Buf, 0, cfg.Size, cfg.Access); err != nil {
			return nil, err
		}
		o.lkey = C.uint32_t(l.pool.lkey)
	}
	o.qp = cfg.QP.qp
	o.scq = cfg.QP.send.cq
	o.laddr = C.uint64_t(cfg.Buf.Addr())
	o.raddr = C.uint64_t(cfg.RemoteAddr)
	o.rkey = C.uint32_t(cfg.RKey)
	o.size = C.uint32_t(cfg.Size)
	o.access = C.int(cfg.Access)
	C.rb_ctl_init(&o.ctl, C.int64_t(cfg.Timeout.Nanoseconds()))
	o.cap = C.uint64_t(cfg.Samples)
	return l, nil
}

// Mode names the loop's registration mode: "pooled" or "per-op".
func (l *MROpLoop) Mode() string {
	if l.cfg.PerOp {
		return "per-op"
	}
	return "pooled"
}

// Run does n WRITEs in one C call and appends one latency (ns) per WRITE to
// the sample buffer (n must fit): in pooled mode from just before
// ibv_post_send to the polled completion, in per-op mode from just before
// ibv_reg_mr to just after ibv_dereg_mr. Failures are *Error (ibv_reg_mr,
// ibv_post_send, ibv_dereg_mr, with the errno), *WCError, ErrTimeout or
// ErrAborted. After an error the QP may hold an outstanding WRITE: move it
// to the error state before reusing it.
func (l *MROpLoop) Run(n int) error {
	if l.closed {
		return ErrClosed
	}
	if n <= 0 {
		return nil
	}
	if uint64(l.o.nsamples)+uint64(n) > uint64(l.o.cap) {
		return fmt.Errorf("verbs: %d operations do not fit the %d-sample buffer (%d used)", n, int(l.o.cap), int(l.o.nsamples))
	}
	rc := C.rb_mr_op_run(l.o, C.uint64_t(n))
	o := l.o
	what := fmt.Sprintf("%s RDMA_WRITE %d bytes, operation %d", l.Mode(), l.cfg.Size, uint64(o.iter))
	switch rc {
	case C.RB_OK:
		return nil
	case C.RB_MR_ERR_REG:
		e := &Error{Op: "ibv_reg_mr", Detail: fmt.Sprintf("%s, access %s", what, l.cfg.Access), Err: syscall.Errno(o.err_errno)}
		if e.Err == syscall.ENOMEM {
			e.Detail += "; ENOMEM usually means RLIMIT_MEMLOCK is too low (ulimit -l)"
		}
		return e
	case C.RB_MR_ERR_DEREG:
		return &Error{Op: "ibv_dereg_mr", Detail: what, Err: syscall.Errno(o.err_errno)}
	case C.RB_MR_ERR_POST:
		return &Error{Op: "ibv_post_send", Detail: what, Err: syscall.Errno(o.err_errno)}
	case C.RB_MR_ERR_POLL:
		return &Error{Op: "ibv_poll_cq", Detail: fmt.Sprintf("%s: returned %d", what, int(o.err_errno))}
	case C.RB_MR_ERR_WC:
		return &WCError{Status: WCStatus(o.err_wc_status), Opcode: OpWrite, VendorErr: uint32(o.err_wc_vendor_err),
			WRID: uint64(o.err_wc_wr_id), QPN: uint32(o.err_wc_qp_num)}
	case C.RB_TIMEOUT:
		return fmt.Errorf("%s: %w: no progress for %v while waiting for %s", what, ErrTimeout, l.cfg.Timeout, C.GoString(o.ctl.wait_what))
	case C.RB_ABORTED:
		return fmt.Errorf("%s: %w", what, ErrAborted)
	}
	return fmt.Errorf("verbs: MR op loop returned %d (%s)", int(rc), what)
}

// Samples is a view of the latencies collected since the last Reset, ns, in
// C memory: valid until the next call on the loop.
func (l *MROpLoop) Samples() []uint64 {
	if l.closed {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(l.o.samples)), int(l.o.nsamples))
}

// Capacity is the sample buffer's size, entries.
func (l *MROpLoop) Capacity() int { return l.cfg.Samples }

// Span is the start of the first and the end of the last operation since
// the last Reset (engine clock, ns; see Now). Operations over the span give
// the throughput of one-at-a-time WRITEs.
func (l *MROpLoop) Span() (first, last int64) {
	if l.closed {
		return 0, 0
	}
	return int64(l.o.t_first), int64(l.o.t_last)
}

// Operations counts the operations done since the loop was created.
func (l *MROpLoop) Operations() uint64 {
	if l.closed {
		return 0
	}
	return uint64(l.o.iter)
}

// Reset empties the sample buffer and the span, to measure after a warm-up.
func (l *MROpLoop) Reset() {
	if l.closed {
		return
	}
	l.o.nsamples = 0
	l.o.t_first, l.o.t_last = 0, 0
}

// Abort makes a running Run return ErrAborted. Safe from another goroutine.
func (l *MROpLoop) Abort() {
	if !l.closed && l.o != nil {
		C.rb_ctl_abort(&l.o.ctl)
	}
}

// Close deregisters the pooled MR and frees the C state. It closes neither
// the QP nor the buffer. Idempotent; nil on a nil *MROpLoop.
func (l *MROpLoop) Close() error {
	if l == nil || l.closed {
		return nil
	}
	l.closed = true
	err := l.pool.Close() // nil in per-op mode
	if l.locked > 0 {
		lockedBytes.Add(^(l.locked - 1))
	}
	if l.o != nil {
		C.free(unsafe.Pointer(l.o.samples))
		C.free(unsafe.Pointer(l.o))
		l.o = nil
		l.pd.release()
	}
	return err
}
