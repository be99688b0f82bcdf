package verbs

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/cloop
#cgo LDFLAGS: -lm
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"syscall"
	"time"
	"unsafe"

	_ "github.com/rdmabench/rdmabench/internal/cloop" // cloop.h: rebuild when it changes
)

// Memory is registered memory an Engine works on: an *MR, or a *PoolBuf
// (a buffer of a Pool, inside its slab's MR).
type Memory interface {
	Addr() uint64 // virtual address of the first byte
	Len() uint64  // bytes; 0 for a nil pointer (no memory)
	LKey() uint32 // local key valid for [Addr, Addr+Len)
}

// EngineConfig sets up an Engine over a connected QP and one local
// registered memory area. The memory holds two areas of Size bytes: the
// source at offset 0 and the target/receive area at RecvOffset.
type EngineConfig struct {
	QP *QP
	// MR is the local registered memory (an *MR or a pool's *PoolBuf). The
	// engine keeps its address and lkey: it must stay registered until the
	// engine is closed.
	MR Memory
	// Op is the operation measured: OpSend, OpSendWithImm, OpWrite,
	// OpWriteWithImm, OpRead, OpFetchAdd or OpCmpSwap. The C loops post it
	// as is (enum ibv_wr_opcode).
	Op Opcode
	// Imm is the immediate of an op with one (OpSendWithImm,
	// OpWriteWithImm): work request k carries Imm + k (mod 2^32; k counts
	// from 0 at each ResetCounters, and PostOne posts k 0). See SetImm.
	Imm        uint32
	Size       int    // message size, bytes
	RecvOffset int    // bytes into MR: where receives land and the peer writes
	RemoteAddr uint64 // peer's target area (write, read, atomics)
	RKey       uint32
	Inline     bool // post with IBV_SEND_INLINE
	TxDepth    int  // outstanding sends in bandwidth mode (>= 1)
	CQMod      int  // signal every CQMod-th send in bandwidth mode (1..TxDepth)
	RxDepth    int  // receives kept posted (>= 1)
	Timeout    time.Duration
	Samples    int // sample buffer capacity, entries
	// PostList chains this many work requests per ibv_post_send in
	// bandwidth mode (0 or 1: one at a time; at most MaxPostList).
	PostList int
	// Event waits for completions on the CQs' completion channels (both CQs
	// must have one) instead of busy polling.
	Event bool
	// UD is where SENDs go on a UD QP (required there, and SEND only). Its
	// receives are Size+GRHSize bytes at RecvOffset, the payload after the GRH.
	UD UDDest
	// PerOp, when set, registers the local buffer of every work request
	// right before its post and deregisters it once the work request is
	// known complete, inside the C loops of LatClient and BWClient
	// (per-operation registration). Receives and the target of the peer's
	// WRITEs stay in MR.
	PerOp *PerOp
	// AddrStep and AddrCycle step a bandwidth sender's addresses
	// (perftest's cycle buffer): work request k uses the local source (or
	// sink) and the remote target (k mod (AddrCycle/AddrStep)) × AddrStep
	// bytes past their starts. AddrStep is at least Size; the local areas
	// and the peer's target must hold AddrCycle bytes. 0: off. Latency
	// loops and the verify pass's PostOne use the starts.
	AddrStep, AddrCycle int
	// RecvStep steps the receives through the receive area's cycle as
	// perftest does: receive k lands (k mod (AddrCycle/RecvStep)) ×
	// RecvStep bytes past RecvOffset (its wr_id is that address). It is at
	// least Size (plus the GRH on UD) and needs AddrCycle. 0: every receive
	// at RecvOffset.
	RecvStep int
	// Spread spreads the work requests' targets over several remote MRs
	// and offsets (the workload knobs; spread_linux.go), or nil. It
	// replaces AddrStep's remote stepping.
	Spread *Spread
	// SGE splits each work request's message over this many SGEs of its
	// local buffer (0, 1: one); the QP needs MaxSendSGE of at least SGE.
	SGE int
}

// PerOp is the memory of per-operation registration (EngineConfig.PerOp).
type PerOp struct {
	// PD is the QP's protection domain, where each operation's MR goes.
	PD *PD
	// Buf is unregistered memory laid out like EngineConfig.MR: the source
	// of SEND/WRITE at offset 0, the sink of READ/atomics at RecvOffset. The
	// caller owns it and closes it after the engine.
	Buf *Buffer
}

// perOpAccess is what an operation's registration grants: LOCAL_WRITE (the
// sink of a READ or an atomic needs it; the source gets it as in
// `rdmabench mr`, so both measure the same call).
const perOpAccess = AccessLocalWrite

// engineOp reports whether the engine's C loops measure op.
func engineOp(op Opcode) bool {
	switch op {
	case OpSend, OpSendWithImm, OpWrite, OpWriteWithImm, OpRead, OpFetchAdd, OpCmpSwap:
		return true
	}
	return false
}

// consumesRecv reports whether op takes a posted receive at its target.
func consumesRecv(op Opcode) bool { return op == OpSend || op == OpSendWithImm || op == OpWriteWithImm }

// MaxPostList bounds EngineConfig.PostList.
const MaxPostList = C.RB_MAX_POST_LIST

// Engine runs the measurement loops of one QP in C. Its state and its sample
// buffer live in C memory; Close frees them.
type Engine struct {
	e      *C.rb_engine
	cfg    EngineConfig
	mu     sync.Mutex // orders SetStop and Abort from other goroutines with Close
	closed bool
}

// NewEngine allocates the C state for cfg.
func NewEngine(cfg EngineConfig) (_ *Engine, err error) {
	switch {
	case cfg.QP == nil || cfg.MR == nil || cfg.MR.Len() == 0: // a nil *MR or *PoolBuf has length 0
		return nil, fmt.Errorf("verbs: engine needs a QP and an MR")
	case !engineOp(cfg.Op):
		return nil, fmt.Errorf("verbs: the engine does not measure %s", cfg.Op)
	case cfg.Size < 1:
		return nil, fmt.Errorf("verbs: engine message size %d must be at least 1 byte", cfg.Size)
	case cfg.RecvOffset < 0 || uint64(cfg.RecvOffset+cfg.Size) > cfg.MR.Len() || uint64(cfg.Size) > cfg.MR.Len():
		return nil, fmt.Errorf("verbs: engine areas (size %d, receive offset %d) exceed the %d-byte MR", cfg.Size, cfg.RecvOffset, cfg.MR.Len())
	case cfg.TxDepth < 1, cfg.RxDepth < 1:
		return nil, fmt.Errorf("verbs: engine tx depth %d and rx depth %d must be at least 1", cfg.TxDepth, cfg.RxDepth)
	case cfg.CQMod < 1 || cfg.CQMod > cfg.TxDepth:
		return nil, fmt.Errorf("verbs: CQ moderation %d must be between 1 and the tx depth %d", cfg.CQMod, cfg.TxDepth)
	case cfg.PostList < 0 || cfg.PostList > MaxPostList:
		return nil, fmt.Errorf("verbs: post list %d out of range 1..%d", cfg.PostList, MaxPostList)
	case cfg.Event && (cfg.QP.send.ch == nil || cfg.QP.recv.ch == nil):
		return nil, fmt.Errorf("verbs: event mode needs CQs created with a completion channel")
	case cfg.QP.typ == QPTypeUD && (cfg.Op != OpSend || cfg.UD.AH == nil):
		return nil, fmt.Errorf("verbs: a UD engine runs SEND with an address handle (op %s)", cfg.Op)
	case cfg.QP.typ == QPTypeUD && uint64(cfg.RecvOffset+cfg.Size+GRHSize) > cfg.MR.Len():
		return nil, fmt.Errorf("verbs: UD receive area (size %d + %d-byte GRH at offset %d) exceeds the %d-byte MR", cfg.Size, GRHSize, cfg.RecvOffset, cfg.MR.Len())
	case cfg.Samples < 16:
		return nil, fmt.Errorf("verbs: engine sample buffer %d must hold at least 16 samples", cfg.Samples)
	}
	if err := cfg.checkAddrStep(); err != nil {
		return nil, err
	}
	if err := cfg.checkPerOp(); err != nil {
		return nil, err
	}
	if err := cfg.checkSpread(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	e := (*C.rb_engine)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_engine{}))))
	if e == nil {
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	defer func() {
		if err != nil {
			freeEngine(e)
		}
	}()
	e.samples = (*C.uint64_t)(C.calloc(C.size_t(cfg.Samples), 8))
	tsSlots := 1 // post_ts: a power of two, indexed by a mask
	for tsSlots < cfg.TxDepth {
		tsSlots *= 2
	}
	e.post_ts = (*C.uint64_t)(C.calloc(C.size_t(tsSlots), 8))
	e.ts_mask = C.uint64_t(tsSlots - 1)
	if cfg.PerOp != nil {
		e.op_mrs = (**C.struct_ibv_mr)(C.calloc(C.size_t(cfg.TxDepth), C.size_t(unsafe.Sizeof(uintptr(0)))))
	}
	if e.samples == nil || e.post_ts == nil || (cfg.PerOp != nil && e.op_mrs == nil) {
		return nil, &Error{Op: "calloc", Detail: fmt.Sprintf("%d samples", cfg.Samples), Err: syscall.ENOMEM}
	}
	e.qp = cfg.QP.qp
	e.scq = cfg.QP.send.cq
	e.rcq = cfg.QP.recv.cq
	e.laddr = C.uint64_t(cfg.MR.Addr())
	e.lkey = C.uint32_t(cfg.MR.LKey())
	e.roff = C.uint64_t(cfg.RecvOffset)
	e.raddr = C.uint64_t(cfg.RemoteAddr)
	e.rkey = C.uint32_t(cfg.RKey)
	e.size = C.uint32_t(cfg.Size)
	e.op = C.int(cfg.Op)
	e.imm = C.uint32_t(cfg.Imm)
	if cfg.Inline {
		e.send_flags = C.IBV_SEND_INLINE
	}
	e.tx_depth = C.uint32_t(cfg.TxDepth)
	e.cq_mod = C.uint32_t(cfg.CQMod)
	e.rx_depth = C.uint32_t(cfg.RxDepth)
	C.rb_ctl_init(&e.ctl, C.int64_t(cfg.Timeout.Nanoseconds()))
	e.post_list = C.uint32_t(max(cfg.PostList, 1))
	if cfg.Event {
		e.event, e.sch, e.rch = 1, cfg.QP.send.ch, cfg.QP.recv.ch
	}
	if cfg.QP.srq != nil {
		e.srq = cfg.QP.srq.srq
	}
	if cfg.QP.typ == QPTypeUD {
		e.ah, e.remote_qpn, e.qkey, e.recv_extra = cfg.UD.AH.ah, C.uint32_t(cfg.UD.QPN), C.uint32_t(cfg.UD.QKey), GRHSize
	}
	if p := cfg.PerOp; p != nil {
		e.per_op, e.op_base, e.op_access = 1, C.uint64_t(p.Buf.Addr()), C.int(perOpAccess)
		pd, err := p.PD.acquire()
		if err != nil {
			return nil, err
		}
		e.pd = pd
	}
	e.cap = C.uint64_t(cfg.Samples)
	e.addr_step, e.addr_cycle = C.uint64_t(cfg.AddrStep), C.uint64_t(cfg.AddrCycle)
	e.recv_step = C.uint64_t(cfg.RecvStep)
	if err := setSpread(e, cfg); err != nil {
		return nil, err
	}
	return &Engine{e: e, cfg: cfg}, nil
}

// checkPerOp checks the per-operation registration settings: a PD and a
// per-op buffer as large as the engine's areas, no inline sends (they are
// copied by the CPU and need no registration), and the memlock limit for
// tx depth registrations of one message.
func (cfg *EngineConfig) checkPerOp() error {
	p := cfg.PerOp
	if p == nil {
		return nil
	}
	switch {
	case p.PD == nil || p.Buf == nil || p.Buf.closed:
		return fmt.Errorf("verbs: per-op registration needs the QP's PD and an open buffer")
	case p.PD != cfg.QP.pd:
		return fmt.Errorf("verbs: per-op registration PD is not the QP's")
	case uint64(cfg.RecvOffset+cfg.Size) > uint64(p.Buf.Len()):
		return fmt.Errorf("verbs: per-op buffer of %d bytes cannot hold the areas (size %d, offset %d)", p.Buf.Len(), cfg.Size, cfg.RecvOffset)
	case cfg.Inline:
		return fmt.Errorf("verbs: per-op registration with inline sends: an inline message is copied by the CPU and needs no registration")
	}
	return CheckMemlock(uint64(cfg.TxDepth) * uint64(cfg.Size))
}

// Now reads the engine's clock (CLOCK_MONOTONIC_RAW), ns.
func Now() int64 { return int64(C.rb_now_ns()) }

// ClockCost measures what one engine clock read costs, ns (mean of n reads).
// Every latency sample includes about one read.
func ClockCost(n int) float64 { return float64(C.rb_clock_cost_ns(C.int(n))) }

func (g *Engine) err(rc C.int, what string) error {
	e := g.e
	switch rc {
	case C.RB_OK:
		return nil
	case C.RB_ERR_WC:
		return &WCError{Status: WCStatus(e.err_wc_status), Opcode: g.cfg.Op, VendorErr: uint32(e.err_wc_vendor_err),
			WRID: uint64(e.err_wc_wr_id), QPN: uint32(e.err_wc_qp_num)}
	case C.RB_ERR_POST:
		return &Error{Op: "ibv_post_send/recv", Detail: fmt.Sprintf("%s %d bytes, %s", g.cfg.Op, g.cfg.Size, what), Err: syscall.Errno(e.err_errno)}
	case C.RB_ERR_POLL:
		return &Error{Op: "ibv_poll_cq", Detail: fmt.Sprintf("returned %d", int(e.err_errno))}
	case C.RB_ERR_REG:
		re := &Error{Op: "ibv_reg_mr", Detail: fmt.Sprintf("per-op registration of %s %d bytes, %s", g.cfg.Op, g.cfg.Size, what), Err: syscall.Errno(e.err_errno)}
		if re.Err == syscall.ENOMEM {
			re.Detail += "; ENOMEM usually means RLIMIT_MEMLOCK is too low (ulimit -l)"
		}
		return re
	case C.RB_ERR_DEREG:
		return &Error{Op: "ibv_dereg_mr", Detail: fmt.Sprintf("per-op registration of %s %d bytes, %s", g.cfg.Op, g.cfg.Size, what), Err: syscall.Errno(e.err_errno)}
	case C.RB_TIMEOUT:
		return fmt.Errorf("%s: %w: no progress for %v while waiting for %s (iteration %d)", what, ErrTimeout, g.cfg.Timeout,
			C.GoString(e.ctl.wait_what), uint64(e.iter))
	case C.RB_ABORTED:
		return fmt.Errorf("%s: %w", what, ErrAborted)
	}
	return fmt.Errorf("%s: engine returned %d", what, int(rc))
}

// PostRecvs posts n receives into the receive area: to the QP's SRQ when
// it was created with one (QPConfig.SRQ), else to its receive queue. A
// receive's wr_id is the address of the receive area (RecvArea).
func (g *Engine) PostRecvs(n int) error {
	return g.err(C.rb_post_recvs(g.e, C.uint32_t(n)), "post receives")
}

// ResetSamples empties the sample buffer.
func (g *Engine) ResetSamples() { g.e.nsamples = 0 }

// Samples is a view of the samples collected since the last ResetSamples,
// ns, in C memory: valid until the next call on the engine.
func (g *Engine) Samples() []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(g.e.samples)), int(g.e.nsamples))
}

// Capacity is the sample buffer's size, entries.
func (g *Engine) Capacity() int { return int(g.e.cap) }

// LatClient runs n latency iterations in one C call, appending one round
// trip time (ns) per iteration to the sample buffer (n must fit in it; in
// ring mode, RingRoom, and CompletedNow counts the iterations).
func (g *Engine) LatClient(n int) error {
	if n <= 0 {
		return nil
	}
	if g.e.ring == 0 && int(g.e.nsamples)+n > int(g.e.cap) {
		return fmt.Errorf("verbs: %d iterations do not fit the %d-sample buffer (%d used)", n, int(g.e.cap), int(g.e.nsamples))
	}
	return g.err(C.rb_lat_client(g.e, C.uint64_t(n)), "latency client")
}

// LatServer answers ping-pong iterations until SetStop's count is reached,
// Abort, an error, or the timeout passes without a message.
// READ and atomics have no responder loop: the peer's CPU takes no part.
func (g *Engine) LatServer() error {
	switch g.cfg.Op {
	case OpSend, OpSendWithImm, OpWrite, OpWriteWithImm:
		return g.err(C.rb_lat_server(g.e), "latency responder")
	}
	return fmt.Errorf("verbs: %s has no responder loop: the peer's CPU takes no part", g.cfg.Op)
}

// SetStop tells a responder loop to return once n iterations are done. It
// is safe to call from another goroutine while the loop runs.
func (g *Engine) SetStop(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		C.rb_ctl_set_stop(&g.e.ctl, C.int64_t(n))
	}
}

// Abort makes a running loop return ErrAborted. Safe from another goroutine,
// also after Close (then it does nothing).
func (g *Engine) Abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		C.rb_ctl_abort(&g.e.ctl)
	}
}

// Iterations is the number of ping-pong iterations done, or messages
// received by a bandwidth receiver.
func (g *Engine) Iterations() uint64 { return uint64(g.e.iter) }

// SetTarget sets how many operations a bandwidth sender posts in total.
func (g *Engine) SetTarget(n uint64) { g.e.target_posts = C.uint64_t(n) }

// Posted and Completed count a bandwidth sender's operations.
func (g *Engine) Posted() uint64 { return uint64(g.e.posted) }

// Completed counts operations known complete (through signaled completions).
func (g *Engine) Completed() uint64 { return uint64(g.e.completed) }

// Span is the first post and the last completion time of a bandwidth
// sender (engine clock, ns).
func (g *Engine) Span() (first, last int64) { return int64(g.e.t_first), int64(g.e.t_last) }

// BWClient streams until the target is complete, the engine clock passes
// until (ns, see Now), or the sample buffer is full (full=true).
func (g *Engine) BWClient(until int64) (full bool, err error) {
	rc := C.rb_bw_client_entry(g.e, C.int64_t(until))
	if rc == C.RB_FULL {
		return true, nil
	}
	return false, g.err(rc, "bandwidth sender")
}

// BWServer receives streamed messages until SetStop's count arrived.
func (g *Engine) BWServer() error { return g.err(C.rb_bw_server(g.e), "bandwidth receiver") }

// Close frees the C state and deregisters any per-op MR a failed loop left.
// It does not close the QP, the MR or the per-op buffer. Idempotent; nil on
// a nil *Engine.
func (g *Engine) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	var err error
	if g.cfg.PerOp != nil {
		if rc := C.rb_op_release(g.e); rc != C.RB_OK {
			err = &Error{Op: "ibv_dereg_mr", Detail: "per-op registration left by a failed loop", Err: syscall.Errno(g.e.err_errno)}
		}
		g.cfg.PerOp.PD.release()
	}
	freeEngine(g.e)
	g.e = nil
	return err
}

// freeEngine frees an engine's C allocations: the state and the buffers it
// points to (free ignores those never allocated). NewEngine's error paths
// and Close use it; it releases nothing else (per-op MRs, the PD).
func freeEngine(e *C.rb_engine) {
	C.free(unsafe.Pointer(e.samples))
	C.free(unsafe.Pointer(e.post_ts))
	C.free(unsafe.Pointer(e.op_mrs))
	freeSpread(e)
	C.free(unsafe.Pointer(e))
}

// SetSchedule makes LatClient open-loop: sends at rate operations per second,
// with constant gaps or, with poisson, exponential ones (seeded by seed). A
// rate of 0 returns to closed loop. It restarts the schedule.
func (g *Engine) SetSchedule(rate float64, poisson bool, seed uint64) {
	g.e.interval_ns = 0
	if rate > 0 {
		g.e.interval_ns = C.int64_t(1e9 / rate)
	}
	g.e.poisson = 0
	if poisson {
		g.e.poisson = 1
	}
	g.e.rng = C.uint64_t(seed | 1)
	g.e.next_intended, g.e.first_intended = 0, 0
}

// SetPace limits BWClient's posts to rate operations per second on average
// (a rate limit enforced in the C loop, since the next post); 0 removes
// the limit.
func (g *Engine) SetPace(rate float64) {
	g.e.pace_ns, g.e.pace_start, g.e.pace_base = 0, 0, 0
	if rate > 0 {
		g.e.pace_ns = C.int64_t(max(1, math.Round(1e9/rate)))
	}
}

// FirstIntended is the intended time of the first send since SetSchedule
// (engine clock, ns), 0 in closed loop.
func (g *Engine) FirstIntended() int64 { return int64(g.e.first_intended) }

// ResetCounters zeroes a bandwidth sender's counters and samples, to start
// measuring after a warm-up. Call it only when every posted operation has
// completed.
func (g *Engine) ResetCounters() {
	g.e.posted, g.e.completed, g.e.target_posts = 0, 0, 0
	g.e.t_first, g.e.t_last = 0, 0
	g.e.nsamples = 0
	g.e.pace_start, g.e.pace_base = 0, 0 // pacing restarts with the counters
	g.e.addr_off = 0                     // and address stepping from the areas' starts
	g.e.ring_read, g.e.full_returns, g.e.t_return, g.e.max_pause_ns = 0, 0, 0, 0
	g.e.sig_left = 0 // signaling counts from the reset: every CQMod-th
}

// The --verify pass: single steps outside the measured loops, each with
// the engine's no-progress deadline.

// PostOne posts one operation, signaled, and waits for its completion. It
// resets a bandwidth sender's counters and samples first: call it only
// when every operation posted before has completed.
func (g *Engine) PostOne() error {
	g.ResetCounters()
	g.SetTarget(1)
	if _, err := g.BWClient(math.MaxInt64); err != nil {
		return err
	}
	if g.Completed() < 1 {
		return fmt.Errorf("verbs: %s of %d bytes not complete", g.cfg.Op, g.cfg.Size)
	}
	return nil
}

// RecvOne waits for one receive completion and posts one receive in its
// place (to the SRQ, if any). It returns the receive's wr_id, the address
// of the receive area the message landed in (with an SRQ shared by several
// engines, possibly another engine's), and the completion's byte count
// (UD: with the GRH). Receive also returns the rest of the completion.
func (g *Engine) RecvOne() (addr uint64, n int, err error) {
	r, err := g.Receive()
	return r.Addr, r.Len, err
}

// Received is one receive completion taken by Receive.
type Received struct {
	Addr uint64 // the receive's wr_id: the address of the receive area it took
	Len  int    // the completion's byte count, bytes (UD: with the GRH)
	// Opcode is the peer's operation as the completion names it (WC):
	// OpSend, OpSendWithImm or OpWriteWithImm.
	Opcode Opcode
	Imm    uint32 // the immediate, host order; valid when HasImm
	HasImm bool   // the completion carries IBV_WC_WITH_IMM
}

// Receive is RecvOne with the whole completion: the opcode and the
// immediate (SEND or WRITE with immediate).
func (g *Engine) Receive() (Received, error) {
	if !consumesRecv(g.cfg.Op) {
		return Received{}, fmt.Errorf("verbs: %s consumes no receives", g.cfg.Op)
	}
	var wrID C.uint64_t
	var byteLen, opcode, imm C.uint32_t
	var hasImm C.int
	if err := g.err(C.rb_recv_one(g.e, &wrID, &byteLen, &opcode, &hasImm, &imm), "receive"); err != nil {
		return Received{}, err
	}
	op, _ := wcOpcode(uint32(opcode), hasImm != 0)
	return Received{Addr: uint64(wrID), Len: int(byteLen), Opcode: op, Imm: uint32(imm), HasImm: hasImm != 0}, nil
}

// SetImm sets the immediate of the next work requests (EngineConfig.Imm):
// work request k carries v + k. The verify pass sets each message's own.
func (g *Engine) SetImm(v uint32) {
	g.cfg.Imm = v
	g.e.imm = C.uint32_t(v)
}

// RecvArea is the address of the engine's receive area (the wr_id of its
// receives): the MR's address plus RecvOffset.
func (g *Engine) RecvArea() uint64 { return g.cfg.MR.Addr() + uint64(g.cfg.RecvOffset) }

// RecvSpan is how many bytes past RecvArea receives may start: the cycle
// when they step (RecvStep), else 1.
func (g *Engine) RecvSpan() uint64 {
	if g.cfg.RecvStep > 0 {
		return uint64(g.cfg.AddrCycle)
	}
	return 1
}

// ResetAbort clears an earlier Abort and stop count, so that the engine can
// run another loop (e.g. after an unreliable receiver was stopped). Call it
// only while no loop runs.
func (g *Engine) ResetAbort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		C.rb_ctl_init(&g.e.ctl, g.e.ctl.timeout_ns)
	}
}
