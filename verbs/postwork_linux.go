package verbs

/*
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// PostWork is the bandwidth sender's posting path without a device: an
// engine's C state with no QP, whose posts go nowhere (tests and
// benchmarks of the loop's own work per work request, outside the
// provider).
type PostWork struct{ e *C.rb_engine }

// PostWorkConfig is what shapes the posting work: EngineConfig's fields of
// the same names, with Addr and RemoteAddr standing for the local and
// remote areas.
type PostWorkConfig struct {
	Op                  Opcode
	Size, RecvOffset    int
	Addr, RemoteAddr    uint64
	LKey, RKey          uint32
	Inline              bool
	TxDepth, CQMod      int
	PostList            int
	AddrStep, AddrCycle int
	UDQPN, UDQKey       uint32 // UD SEND: the peer (a NULL address handle)
}

// NewPostWork allocates the C state for cfg.
func NewPostWork(cfg PostWorkConfig) (*PostWork, error) {
	if cfg.TxDepth < 1 || cfg.CQMod < 1 || cfg.CQMod > cfg.TxDepth || cfg.PostList < 0 || cfg.PostList > MaxPostList {
		return nil, fmt.Errorf("verbs: post work: tx depth %d, cq mod %d, post list %d", cfg.TxDepth, cfg.CQMod, cfg.PostList)
	}
	e := (*C.rb_engine)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_engine{}))))
	if e == nil {
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	ts := 1
	for ts < cfg.TxDepth {
		ts *= 2
	}
	e.post_ts = (*C.uint64_t)(C.calloc(C.size_t(max(ts, cfg.TxDepth)), 8))
	if e.post_ts == nil {
		freeEngine(e)
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	e.ts_mask = C.uint64_t(ts - 1)
	e.op, e.size, e.roff = C.int(cfg.Op), C.uint32_t(cfg.Size), C.uint64_t(cfg.RecvOffset)
	e.laddr, e.lkey, e.raddr, e.rkey = C.uint64_t(cfg.Addr), C.uint32_t(cfg.LKey), C.uint64_t(cfg.RemoteAddr), C.uint32_t(cfg.RKey)
	if cfg.Inline {
		e.send_flags = C.IBV_SEND_INLINE
	}
	e.tx_depth, e.cq_mod, e.post_list = C.uint32_t(cfg.TxDepth), C.uint32_t(cfg.CQMod), C.uint32_t(max(cfg.PostList, 1))
	e.addr_step, e.addr_cycle = C.uint64_t(cfg.AddrStep), C.uint64_t(cfg.AddrCycle)
	e.remote_qpn, e.qkey = C.uint32_t(cfg.UDQPN), C.uint32_t(cfg.UDQKey)
	return &PostWork{e: e}, nil
}

// Run posts n work requests as the bandwidth loop does, each complete at
// once. With check, every work request is compared with one built from
// scratch (the loop's old way): a difference is an error naming the first.
func (p *PostWork) Run(n int, check bool) error {
	c := C.int(0)
	if check {
		c = 1
	}
	if rc := C.rb_post_dry(p.e, C.uint64_t(n), c); rc != C.RB_OK {
		return fmt.Errorf("verbs: post work: work request %d differs from a fresh build (rc %d)", uint64(p.e.err_wc_wr_id), int(rc))
	}
	return nil
}

// RunRebuild posts n work requests the way the loop did before its work
// requests were prebuilt (a reference for benchmarks): a clock read per
// post call, two divisions and a full build per work request.
func (p *PostWork) RunRebuild(n int) { C.rb_post_dry_rebuild(p.e, C.uint64_t(n)) }

// Posted counts the work requests posted since NewPostWork.
func (p *PostWork) Posted() uint64 { return uint64(p.e.posted) }

// Close frees the C state.
func (p *PostWork) Close() {
	if p.e != nil {
		freeEngine(p.e)
		p.e = nil
	}
}
