package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"syscall"
)

// SRQConfig describes a shared receive queue to create.
type SRQConfig struct {
	MaxWR  int // receives it holds (>= 1)
	MaxSGE int // scatter/gather entries per receive (0: 1)
}

// SRQ is a shared receive queue (struct ibv_srq): the receives of every QP
// created with it (QPConfig.SRQ) come from here. A message on any of those
// QPs takes the oldest receive posted, whichever QP posted it, and its
// completion goes to that QP's receive CQ; a receive's wr_id tells where
// the message landed.
type SRQ struct {
	mu     sync.Mutex
	pd     *PD
	srq    *C.struct_ibv_srq
	maxWR  int
	maxSGE int
	nqp    int // QPs created with it and not yet closed
	closed bool
}

// CreateSRQ calls ibv_create_srq. Limits above the device's give an error
// naming the requested values and the device limits.
func (p *PD) CreateSRQ(cfg SRQConfig) (*SRQ, error) {
	if cfg.MaxWR < 1 || cfg.MaxSGE < 0 {
		return nil, fmt.Errorf("verbs: ibv_create_srq: max_wr %d must be at least 1 (max_sge %d: at least 0)", cfg.MaxWR, cfg.MaxSGE)
	}
	pd, err := p.acquire()
	if err != nil {
		return nil, err
	}
	wr, sge := C.uint32_t(cfg.MaxWR), C.uint32_t(max(cfg.MaxSGE, 1))
	srq, err := C.rb_create_srq(pd, &wr, &sge)
	if srq == nil {
		p.release()
		detail := fmt.Sprintf("max_wr %d, max_sge %d", cfg.MaxWR, max(cfg.MaxSGE, 1))
		if da, qerr := p.ctx.QueryDevice(); qerr == nil {
			detail += fmt.Sprintf("; device limits: max_srq %d, max_srq_wr %d, max_srq_sge %d", da.MaxSRQ, da.MaxSRQWR, da.MaxSRQSGE)
		}
		return nil, &Error{Op: "ibv_create_srq", Detail: detail, Err: err}
	}
	return &SRQ{pd: p, srq: srq, maxWR: int(wr), maxSGE: int(sge)}, nil
}

// MaxWR is the number of receives the device granted (at least what was asked).
func (s *SRQ) MaxWR() int { return s.maxWR }

// PostRecv calls ibv_post_srq_recv: one receive of length bytes at offset
// into mr.
func (s *SRQ) PostRecv(wrID uint64, mr *MR, offset, length int) error {
	if s.closed {
		return ErrClosed
	}
	if mr == nil || offset < 0 || length < 0 || uint64(offset+length) > mr.length {
		return fmt.Errorf("verbs: ibv_post_srq_recv: %d bytes at offset %d outside the %d-byte MR", length, offset, mr.Len())
	}
	if rc := C.rb_post_srq_recv(s.srq, C.uint64_t(wrID), C.uint64_t(mr.addr+uint64(offset)), C.uint32_t(length), C.uint32_t(mr.lkey)); rc != 0 {
		return &Error{Op: "ibv_post_srq_recv", Detail: fmt.Sprintf("%d bytes, max_wr %d", length, s.maxWR), Err: syscall.Errno(rc)}
	}
	return nil
}

// acquire counts a QP created with the SRQ; releaseQP undoes it when the
// QP is closed.
func (s *SRQ) acquire() (*C.struct_ibv_srq, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.nqp++
	return s.srq, nil
}

// releaseQP undoes acquire; nil-safe (a QP without an SRQ).
func (s *SRQ) releaseQP() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.nqp--
	s.mu.Unlock()
}

// Close destroys the SRQ; it fails while QPs created with it are open.
// Idempotent; nil on a nil *SRQ.
func (s *SRQ) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.nqp > 0 {
		return fmt.Errorf("verbs: close srq: %d QPs still use it", s.nqp)
	}
	s.closed = true
	defer s.pd.release()
	if rc := C.ibv_destroy_srq(s.srq); rc != 0 {
		return &Error{Op: "ibv_destroy_srq", Err: syscall.Errno(rc)}
	}
	return nil
}
