package spec

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// DeviceLimits are the facts of one open device and port that a spec is
// held to before anything is created, as plain data: bench fills them
// from verbs (Device.limits), tests write them by hand.
type DeviceLimits struct {
	Name           string // the device, e.g. "rxe0"
	Port           int    // the port number
	MaxQPWR        int    // max_qp_wr: work requests per QP
	MaxCQE         int    // max_cqe: entries per CQ
	MaxMRSize      uint64 // max_mr_size, bytes; 0: unknown
	AtomicCap      bool   // atomic_cap is not IBV_ATOMIC_NONE
	IWARP          bool   // an iWARP device (RC over rdma_cm only)
	MaxMsgSize     uint64 // the port's max_msg_sz, bytes; 0: unknown
	PKeyTableLen   int    // the port's P_Key table entries
	NumCompVectors int    // completion vectors
	MaxSRQ         int    // max_srq: 0 when the device has none
	MaxSRQWR       int    // max_srq_wr
	// The workload knobs' limits (workload.go); 0: unknown.
	MaxMR    int // max_mr: memory regions
	MaxSGE   int // max_sge: SGEs per send work request
	MaxSGERd int // max_sge_rd: SGEs per READ work request
}

// ErrNotSupported: the device lacks what the spec needs. Its text is
// verbs.ErrNotSupported's; bench makes its errors match that one too
// (exit 3).
var ErrNotSupported = errors.New("not supported by the device")

// CQSlack is what each CQ holds beyond its depth.
const CQSlack = 16

// CheckDevice refuses a spec the device d cannot run, naming the device
// and what it lacks (wrapping ErrNotSupported), the workload knobs'
// limits included. mrBytes is the size of each memory region the spec
// registers.
func (s Spec) CheckDevice(d DeviceLimits, mrBytes int) error {
	switch {
	case s.TxDepth > d.MaxQPWR:
		return fmt.Errorf("tx depth %d is above %s's max_qp_wr %d (work requests per QP): %w", s.TxDepth, d.Name, d.MaxQPWR, ErrNotSupported)
	case s.RxDepth > d.MaxQPWR:
		return fmt.Errorf("rx depth %d is above %s's max_qp_wr %d (work requests per QP): %w", s.RxDepth, d.Name, d.MaxQPWR, ErrNotSupported)
	case max(s.TxDepth, s.RxDepth)+CQSlack > d.MaxCQE:
		return fmt.Errorf("tx depth %d / rx depth %d need CQs of %d entries (the depth + %d), above %s's max_cqe %d: %w",
			s.TxDepth, s.RxDepth, max(s.TxDepth, s.RxDepth)+CQSlack, CQSlack, d.Name, d.MaxCQE, ErrNotSupported)
	case d.MaxMRSize != 0 && uint64(mrBytes) > d.MaxMRSize:
		return fmt.Errorf("size %d bytes needs memory regions of %d bytes, above %s's max_mr_size %d: %w",
			s.Size, mrBytes, d.Name, d.MaxMRSize, ErrNotSupported)
	case d.IWARP && s.Traits().Imm: // RDMAP (iWARP) has no immediate data; siw posts neither opcode
		return fmt.Errorf("%s is an iWARP device: --op %s (with immediate data) %w: iWARP carries no immediate data (RoCE and InfiniBand do)",
			d.Name, s.Op, ErrNotSupported)
	case d.IWARP && s.QPTypeOrDefault() != result.QPTypeRC:
		return fmt.Errorf("%s is an iWARP device: --qp-type %s %w (iWARP carries reliable connections only)", d.Name, s.QPTypeOrDefault(), ErrNotSupported)
	case d.IWARP && !s.RDMACM:
		return fmt.Errorf("%s is an iWARP device: connecting its QPs without rdma_cm is %w: use --rdma-cm", d.Name, ErrNotSupported)
	case s.Traits().Atomic && !d.AtomicCap:
		return fmt.Errorf("%s: atomics %w (atomic_cap 0)", d.Name, ErrNotSupported)
	case uint64(s.Size) > d.MaxMsgSize && d.MaxMsgSize != 0:
		return fmt.Errorf("size %d bytes exceeds %s port %d max_msg_sz %d: %w", s.Size, d.Name, d.Port, d.MaxMsgSize, ErrNotSupported)
	}
	return s.CheckDeviceWorkload(d) // the workload knobs (workload.go)
}

// CheckDeviceChoices refuses choices the device cannot take: a P_Key
// index past the port's table, a completion vector past the device's.
func (s Spec) CheckDeviceChoices(d DeviceLimits) error {
	if n := d.PKeyTableLen; s.PKeyIndex > 0 && s.PKeyIndex >= n {
		return fmt.Errorf("P_Key index %d out of range: %s port %d has %d P_Key table entries (0..%d)", s.PKeyIndex, d.Name, d.Port, n, max(n-1, 0))
	}
	if n := d.NumCompVectors; s.CompVector > 0 && s.CompVector >= n {
		return fmt.Errorf("completion vector %d out of range: %s has %d (0..%d)", s.CompVector, d.Name, n, max(n-1, 0))
	}
	return nil
}

// CheckDeviceSRQ refuses --srq on a device without shared receive queues
// (wrapping ErrNotSupported) or with fewer work requests per SRQ than the
// rx depth.
func (s Spec) CheckDeviceSRQ(d DeviceLimits) error {
	switch {
	case d.MaxSRQ == 0:
		return fmt.Errorf("--srq: %s has no shared receive queues (max_srq 0): %w", d.Name, ErrNotSupported)
	case s.RxDepth > d.MaxSRQWR:
		return fmt.Errorf("--srq: rx depth %d exceeds %s's max_srq_wr %d", s.RxDepth, d.Name, d.MaxSRQWR)
	}
	return nil
}
