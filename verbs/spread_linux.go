//go:build cgo && linux

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

// Spread is where an engine's work requests land when they spread over a
// region or several MRs (the workload knobs). Without Targets (SEND) only
// the local buffer changes: Locals[m], m chosen as for targets. Else work request k's remote
// target lies in one of Targets, at an offset slot × Step with slot below
// Slots, chosen in the C loop by Access (verbs/engine.c, spread_wr). With
// Locals, the local buffer of a work request to Targets[m] is Locals[m]
// (one per target) instead of EngineConfig.MR's areas.
type Spread struct {
	Targets []RemoteMR
	Locals  []Memory // nil, or len(Targets) local buffers of at least Size bytes
	Access  SpreadAccess
	Step    uint64 // bytes between offsets, at least 1
	Slots   uint64 // offsets per target MR, at least 1
	Seed    uint64 // SpreadRandom's PRNG seed (0 is taken as 1)
}

// RemoteMR is a peer's memory region: its start, length (bytes) and rkey.
type RemoteMR struct {
	Addr uint64
	Len  uint64
	RKey uint32
}

// SpreadAccess is how each work request picks its target (Spread).
type SpreadAccess int

// The patterns: SpreadSeq and SpreadStride take the MRs round robin,
// each one's slots in order; SpreadRandom draws MR and slot uniformly.
const (
	SpreadSeq    SpreadAccess = C.RB_SP_SEQ
	SpreadRandom SpreadAccess = C.RB_SP_RANDOM
	SpreadStride SpreadAccess = C.RB_SP_STRIDE
)

// MaxSGE bounds EngineConfig.SGE.
const MaxSGE = 64

// checkSpread checks the spreading and SGE settings: targets that hold
// every slot's message, one local buffer per target, SGEs of at least a
// byte each.
func (cfg *EngineConfig) checkSpread() error {
	if n := cfg.SGE; n < 0 || n > MaxSGE || (n > 1 && cfg.Size < n) {
		return fmt.Errorf("verbs: %d SGEs out of range 1..%d (and at most the %d-byte message)", n, MaxSGE, cfg.Size)
	}
	if cfg.SGE > 1 && cfg.PerOp != nil {
		return fmt.Errorf("verbs: %d SGEs with per-op registration: it registers one buffer per operation", cfg.SGE)
	}
	sp := cfg.Spread
	if sp == nil {
		return nil
	}
	switch {
	case len(sp.Targets) == 0 && len(sp.Locals) == 0, len(sp.Targets) > 1<<20 || len(sp.Locals) > 1<<20:
		return fmt.Errorf("verbs: spread over %d target MRs and %d local buffers out of range 1..%d", len(sp.Targets), len(sp.Locals), 1<<20)
	case sp.Targets != nil && sp.Locals != nil && len(sp.Locals) != len(sp.Targets):
		return fmt.Errorf("verbs: spread with %d local buffers for %d target MRs: one each", len(sp.Locals), len(sp.Targets))
	case sp.Step < 1 || sp.Slots < 1:
		return fmt.Errorf("verbs: spread step %d bytes and %d slots must be at least 1", sp.Step, sp.Slots)
	case sp.Access != SpreadSeq && sp.Access != SpreadRandom && sp.Access != SpreadStride:
		return fmt.Errorf("verbs: spread access %d unknown", int(sp.Access))
	case cfg.PerOp != nil:
		return fmt.Errorf("verbs: spread with per-op registration is not supported")
	}
	reach := (sp.Slots-1)*sp.Step + uint64(cfg.Size)
	for i, t := range sp.Targets {
		if t.Len < reach || t.Addr+t.Len < t.Addr {
			return fmt.Errorf("verbs: target MR %d (%d bytes at 0x%x) cannot hold %d slots %d bytes apart of %d-byte messages", i, t.Len, t.Addr, sp.Slots, sp.Step, cfg.Size)
		}
	}
	for i, l := range sp.Locals {
		if l == nil || l.Len() < uint64(cfg.Size) {
			return fmt.Errorf("verbs: local buffer %d cannot hold a %d-byte message", i, cfg.Size)
		}
	}
	return nil
}

// setSpread copies the spreading and SGE settings into the engine's C
// memory (freed by freeSpread).
func setSpread(e *C.rb_engine, cfg EngineConfig) error {
	if cfg.SGE > 1 {
		n := C.size_t(max(cfg.PostList, 1) * cfg.SGE)
		if e.sgl = (*C.struct_ibv_sge)(C.calloc(n, C.size_t(unsafe.Sizeof(C.struct_ibv_sge{})))); e.sgl == nil {
			return &Error{Op: "calloc", Detail: fmt.Sprintf("%d SGEs", int(n)), Err: syscall.ENOMEM}
		}
		e.nsge = C.uint32_t(cfg.SGE)
	}
	sp := cfg.Spread
	if sp == nil {
		return nil
	}
	n := max(len(sp.Targets), len(sp.Locals)) // no targets: the local buffers alone (SEND)
	if sp.Targets != nil {
		e.sp_raddr = (*C.uint64_t)(C.calloc(C.size_t(n), 8))
		e.sp_rkey = (*C.uint32_t)(C.calloc(C.size_t(n), 4))
	}
	if sp.Locals != nil {
		e.sp_laddr = (*C.uint64_t)(C.calloc(C.size_t(n), 8))
		e.sp_lkey = (*C.uint32_t)(C.calloc(C.size_t(n), 4))
	}
	if (sp.Targets != nil && (e.sp_raddr == nil || e.sp_rkey == nil)) || (sp.Locals != nil && (e.sp_laddr == nil || e.sp_lkey == nil)) {
		return &Error{Op: "calloc", Detail: fmt.Sprintf("%d target MRs", n), Err: syscall.ENOMEM}
	}
	if sp.Targets != nil {
		raddr, rkey := unsafe.Slice((*uint64)(unsafe.Pointer(e.sp_raddr)), n), unsafe.Slice((*uint32)(unsafe.Pointer(e.sp_rkey)), n)
		for i, t := range sp.Targets {
			raddr[i], rkey[i] = t.Addr, t.RKey
		}
	}
	if sp.Locals != nil {
		laddr, lkey := unsafe.Slice((*uint64)(unsafe.Pointer(e.sp_laddr)), n), unsafe.Slice((*uint32)(unsafe.Pointer(e.sp_lkey)), n)
		for i, l := range sp.Locals {
			laddr[i], lkey[i] = l.Addr(), l.LKey()
		}
	}
	e.sp_n, e.sp_access = C.uint32_t(n), C.int(sp.Access)
	e.sp_step, e.sp_slots, e.sp_rng = C.uint64_t(sp.Step), C.uint64_t(sp.Slots), C.uint64_t(max(sp.Seed, 1))
	return nil
}

// freeSpread frees what setSpread allocated (free ignores NULL).
func freeSpread(e *C.rb_engine) {
	for _, p := range []unsafe.Pointer{unsafe.Pointer(e.sp_raddr), unsafe.Pointer(e.sp_rkey), unsafe.Pointer(e.sp_laddr), unsafe.Pointer(e.sp_lkey), unsafe.Pointer(e.sgl)} {
		C.free(p)
	}
}

// Peek is what PeekSpread saw of each work request: its remote address
// and rkey, its SGEs' bytes in all and its first SGE's lkey.
type Peek struct {
	RAddr      uint64
	RKey, LKey uint32
	SGEBytes   uint32
}

// PeekSpread builds n work requests of op (size bytes, post list
// postList) with spreading sp and sge SGEs as the C loops do, posting
// nothing: how tests check spread_wr's choices without a device.
func PeekSpread(op Opcode, size int, sp *Spread, sge, postList, n int) ([]Peek, error) {
	cfg := EngineConfig{Op: op, Size: size, Spread: sp, SGE: sge, PostList: postList}
	if err := cfg.checkSpread(); err != nil {
		return nil, err
	}
	e := (*C.rb_engine)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_engine{}))))
	if e == nil {
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	defer freeEngine(e)
	e.op, e.size, e.post_list = C.int(op), C.uint32_t(size), C.uint32_t(max(postList, 1))
	if err := setSpread(e, cfg); err != nil {
		return nil, err
	}
	ra, rk := (*C.uint64_t)(C.calloc(C.size_t(n), 8)), (*C.uint32_t)(C.calloc(C.size_t(n), 4))
	sb, lk := (*C.uint32_t)(C.calloc(C.size_t(n), 4)), (*C.uint32_t)(C.calloc(C.size_t(n), 4))
	for _, p := range []unsafe.Pointer{unsafe.Pointer(ra), unsafe.Pointer(rk), unsafe.Pointer(sb), unsafe.Pointer(lk)} {
		defer C.free(p)
	}
	C.rb_spread_peek(e, C.uint64_t(n), ra, rk, sb, lk)
	raddr, rkey := unsafe.Slice((*uint64)(unsafe.Pointer(ra)), n), unsafe.Slice((*uint32)(unsafe.Pointer(rk)), n)
	sgeBytes, lkey := unsafe.Slice((*uint32)(unsafe.Pointer(sb)), n), unsafe.Slice((*uint32)(unsafe.Pointer(lk)), n)
	out := make([]Peek, n)
	for i := range out {
		out[i] = Peek{RAddr: raddr[i], RKey: rkey[i], LKey: lkey[i], SGEBytes: sgeBytes[i]}
	}
	return out, nil
}
