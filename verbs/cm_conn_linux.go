package verbs

/*
#include <stdlib.h>
#include "cm.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

// ConnParam are the connection parameters of Connect and Accept.
type ConnParam struct {
	// PrivateData goes to the peer with the request (at most 56 bytes on RC).
	PrivateData []byte
	// ResponderResources is the READ/atomic depth this side serves and
	// InitiatorDepth the one it issues.
	ResponderResources, InitiatorDepth int
	// RetryCount (transport retries, 0 means 7) and RNRRetryCount
	// (receiver-not-ready retries, 7 is forever; 0 means 7).
	RetryCount, RNRRetryCount int
}

// retries returns p's retry counts with 0 meaning 7.
func (p ConnParam) retries() (C.uint8_t, C.uint8_t) {
	r, rnr := p.RetryCount, p.RNRRetryCount
	if r == 0 {
		r = 7
	}
	if rnr == 0 {
		rnr = 7
	}
	return C.uint8_t(r), C.uint8_t(rnr)
}

// MaxPrivateData is the most private data an RC connect request carries.
const MaxPrivateData = 56

// Connect sends a connection request for the id's QP and waits until
// deadline for ESTABLISHED (the QP is then in RTS). A rejection or an
// unreachable peer gives an *EventError.
func (id *CMID) Connect(p ConnParam, deadline time.Time) error {
	if len(p.PrivateData) > MaxPrivateData {
		return fmt.Errorf("verbs: rdma_connect: %d bytes of private data, at most %d", len(p.PrivateData), MaxPrivateData)
	}
	var priv unsafe.Pointer
	if len(p.PrivateData) > 0 {
		priv = C.CBytes(p.PrivateData)
		defer C.free(priv)
	}
	retry, rnr := p.retries()
	if rc := C.rb_cm_connect(id.id, priv, C.uint8_t(len(p.PrivateData)), C.uint8_t(p.ResponderResources), C.uint8_t(p.InitiatorDepth),
		retry, rnr); rc != 0 {
		return &Error{Op: "rdma_connect", Err: syscall.Errno(rc)}
	}
	_, err := id.await("rdma_connect", CMEventEstablished, deadline, nil)
	return err
}

// Accept accepts the connection request that created the id (its QP moves
// to RTR; ESTABLISHED follows on the channel).
func (id *CMID) Accept(p ConnParam) error {
	retry, rnr := p.retries()
	if rc := C.rb_cm_accept(id.id, C.uint8_t(p.ResponderResources), C.uint8_t(p.InitiatorDepth), retry, rnr); rc != 0 {
		return &Error{Op: "rdma_accept", Err: syscall.Errno(rc)}
	}
	return nil
}

// Reject refuses the connection request that created the id.
func (id *CMID) Reject() error {
	if rc, err := C.rdma_reject(id.id, nil, 0); rc != 0 {
		return &Error{Op: "rdma_reject", Err: err}
	}
	return nil
}

// Path is what a connected QP's address vector holds, and the READ/atomic
// depth it was given.
type Path struct {
	MTU       int // path MTU, bytes
	SGIDIndex int
	Port      int
	// MaxRdAtomic is the QP's outstanding READ/atomic depth as initiator
	// (max_rd_atomic): on the rdma_cm active side, what the peer's reply
	// allowed, not what the connect request asked for.
	MaxRdAtomic int
}

// Path reads back the QP's path MTU, source GID index, port and
// max_rd_atomic (after rdma_cm connected it, or after ToRTS).
func (q *QP) Path() (Path, error) {
	var mtu, sgid, port, rd C.int
	if rc := C.rb_qp_path(q.qp, &mtu, &sgid, &port, &rd); rc != 0 {
		return Path{}, &Error{Op: "ibv_query_qp", Err: syscall.Errno(rc)}
	}
	return Path{MTU: MTUBytes(int(mtu)), SGIDIndex: int(sgid), Port: int(port), MaxRdAtomic: int(rd)}, nil
}

// SetAccess sets the remote access of a connected RC QP (RTS to RTS), e.g. to
// narrow what rdma_cm granted to what the test needs.
func (q *QP) SetAccess(access Access) error {
	if rc := C.rb_qp_set_access(q.qp, C.int(access)); rc != 0 {
		return &Error{Op: "ibv_modify_qp access", Detail: access.String(), Err: syscall.Errno(rc)}
	}
	return nil
}
