package verbs

// #include <stdlib.h>
// #include "engine.h"
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// PostWork is the bandwidth sender's posting path without a device: an
// engine's C state with no QP, whose posts go nowhere and complete at once
// (tests and benchmarks of the loop's own work per work request). Of cfg
// it takes Op, Size, RecvOffset, RemoteAddr, RKey, Inline, TxDepth, CQMod,
// PostList, AddrStep and AddrCycle; the local area is at laddr (lkey 1).
type PostWork struct{ e *C.rb_engine }

// NewPostWork allocates the C state.
func NewPostWork(cfg EngineConfig, laddr uint64) (*PostWork, error) {
	if cfg.TxDepth < 1 || cfg.CQMod < 1 || cfg.CQMod > cfg.TxDepth || cfg.PostList < 0 || cfg.PostList > MaxPostList {
		return nil, fmt.Errorf("verbs: post work: tx depth %d, cq mod %d, post list %d", cfg.TxDepth, cfg.CQMod, cfg.PostList)
	}
	ts := 1
	for ts < cfg.TxDepth {
		ts *= 2
	}
	e := (*C.rb_engine)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_engine{}))))
	if e != nil {
		e.post_ts = (*C.uint64_t)(C.calloc(C.size_t(ts), 8))
	}
	if e == nil || e.post_ts == nil {
		freeEngine(e)
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	e.ts_mask, e.op, e.size, e.roff = C.uint64_t(ts-1), C.int(cfg.Op), C.uint32_t(cfg.Size), C.uint64_t(cfg.RecvOffset)
	e.imm = C.uint32_t(cfg.Imm)
	e.laddr, e.lkey, e.raddr, e.rkey = C.uint64_t(laddr), 1, C.uint64_t(cfg.RemoteAddr), C.uint32_t(cfg.RKey)
	if cfg.Inline {
		e.send_flags = C.IBV_SEND_INLINE
	}
	e.tx_depth, e.cq_mod, e.post_list = C.uint32_t(cfg.TxDepth), C.uint32_t(cfg.CQMod), C.uint32_t(max(cfg.PostList, 1))
	e.addr_step, e.addr_cycle = C.uint64_t(cfg.AddrStep), C.uint64_t(cfg.AddrCycle)
	return &PostWork{e: e}, nil
}

// Run posts n more work requests as the bandwidth loop does. With check,
// each is compared with one built from scratch: a difference is an error
// naming the first. RunRebuild posts them the way the loop did before its
// work requests were prebuilt (a reference for benchmarks): a clock read
// per post call, two divisions and a full build per work request.
func (p *PostWork) Run(n int, check bool) error {
	if rc := C.rb_post_dry(p.e, C.uint64_t(n), C.int(map[bool]int{true: 1}[check])); rc != C.RB_OK {
		return fmt.Errorf("verbs: post work: work request %d differs from a fresh build", uint64(p.e.err_wc_wr_id))
	}
	return nil
}

func (p *PostWork) RunRebuild(n int) { C.rb_post_dry_rebuild(p.e, C.uint64_t(n)) } //nolint:revive // documented with Run

// Posted counts the work requests posted since NewPostWork.
func (p *PostWork) Posted() uint64 { return uint64(p.e.posted) }

// Close frees the C state. Idempotent; nil on a nil *PostWork.
func (p *PostWork) Close() error {
	if p != nil && p.e != nil {
		freeEngine(p.e)
		p.e = nil
	}
	return nil
}
