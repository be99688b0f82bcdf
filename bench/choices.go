package bench

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// The differences from perftest that are choices: each is an option whose
// default is perftest's behaviour, recorded in every RDMA result
// (result.Choices) and in docs/defaults.md.
//
//   - Relaxed ordering: the registered memory asks for
//     IBV_ACCESS_RELAXED_ORDERING unless --disable-pcie-relaxed (perftest's
//     default on Linux). The flag is optional: libibverbs and the kernel
//     drop it where it is not supported.
//   - Address stepping: in bandwidth tests work request k's local and
//     remote addresses lie (k mod cycle/step) × step bytes past the areas'
//     starts, step being the message rounded up to the CPU's cache line
//     (sysfs coherency_line_size, else 64 B: cacheline.go) and the
//     cycle buffer a page (perftest's increase_loc_addr/increase_rem_addr),
//     for messages up to half the cycle; --no-addr-step turns it off. A
//     SEND receiver steps its receives over its cycle the same way
//     (recvStep).
//   - GRH: on InfiniBand the address vector has no GRH unless this side's
//     GID was given with --gid-index (perftest -x); RoCE always needs one.
//   - Completion vectors: every CQ on vector 0 (perftest's --eq_num
//     default), one vector for all (--comp-vector N), or round robin over
//     the device's vectors (--comp-vector spread).
//   - P_Key index: --pkey-index (perftest --pkey_index), default 0, given
//     to the QPs at INIT.

// MaxAddrCycle bounds Spec.AddrCycle, bytes (a 64 KiB page with room).
const MaxAddrCycle = 1 << 20

// MaxPKeyIndex bounds --pkey-index (a P_Key table holds at most 65536).
const MaxPKeyIndex = 0xffff

// MaxCompVector bounds --comp-vector (the device's count bounds it further).
const MaxCompVector = 1 << 16

// pageSize is the default cycle buffer, bytes (perftest's: the page size).
var pageSize = os.Getpagesize()

// choiceDefaults fills the choices' defaults: the cycle buffer of a
// bandwidth test (or of a latency test's load QPs) that steps its
// addresses, so that the server sizes its areas from the client's page.
func (s Spec) choiceDefaults() Spec {
	if (s.Mode == result.ModeBW || s.Load != nil) && s.Transport != result.TransportTCP && !s.NoAddrStep && s.AddrCycle == 0 {
		s.AddrCycle = pageSize
	}
	return s
}

// validateChoices checks the choices' limits.
func (s Spec) validateChoices() error {
	switch c := s.AddrCycle; {
	case c != 0 && (c < 2*DefaultCacheLine || c > MaxAddrCycle || c&(c-1) != 0):
		return fmt.Errorf("address cycle %d bytes invalid: a power of two in %d..%d", c, 2*DefaultCacheLine, MaxAddrCycle)
	case s.PKeyIndex < 0 || s.PKeyIndex > MaxPKeyIndex:
		return fmt.Errorf("P_Key index %d out of range 0..%d", s.PKeyIndex, MaxPKeyIndex)
	case s.PKeyIndex != 0 && s.RDMACM:
		return fmt.Errorf("P_Key index %d: rdma_cm chooses the P_Key of its path; --pkey-index applies without --rdma-cm", s.PKeyIndex)
	case s.CompVector < 0 || s.CompVector > MaxCompVector:
		return fmt.Errorf("completion vector %d out of range 0..%d", s.CompVector, MaxCompVector)
	case s.CompVector != 0 && s.CompVectorSpread:
		return fmt.Errorf("completion vector %d and spread contradict: give one", s.CompVector)
	}
	return nil
}

// addrStep is the address stepping of s's bandwidth work requests: the
// step (the message rounded up to this machine's cache line, cacheLine) and
// the cycle, bytes;
// 0, 0 when off: --no-addr-step, latency tests, TCP, and messages above
// half the cycle (perftest's rule).
func (s Spec) addrStep() (step, cycle int) {
	cycle = s.AddrCycle
	if cycle == 0 {
		cycle = pageSize
	}
	if s.NoAddrStep || s.Mode != result.ModeBW || s.Transport == result.TransportTCP || s.Size > cycle/2 {
		return 0, 0
	}
	return roundUp(s.Size, cacheLine), cycle
}

// recvStep is how far each receive of a SEND bandwidth test lies past the
// previous one's, over the receiver's cycle buffer, bytes: perftest steps
// its receive buffers as it steps its sends, by the receive (the message,
// and on UD the 40-byte GRH before it) rounded up to the cache line, for
// receives up to half the cycle. 0 when the sends do not step (addrStep),
// for other ops, and for larger receives.
func (s Spec) recvStep() int {
	step, cycle := s.addrStep()
	if step == 0 || s.Op != result.OpSend {
		return 0
	}
	n := s.Size
	if s.qpType() == result.QPTypeUD {
		n += verbs.GRHSize
	}
	if n > cycle/2 {
		return 0
	}
	return roundUp(n, cacheLine)
}

// roundUp is n rounded up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// targetLen is how many bytes of a side's target area the peer's work
// requests reach: the message, or the whole cycle when they step.
func (s Spec) targetLen() int {
	if _, cycle := s.addrStep(); cycle > 0 {
		return max(s.Size, cycle)
	}
	return s.Size
}

// relaxedAccess is the access flag relaxed ordering adds to the test's
// registrations: AccessRelaxedOrdering unless --disable-pcie-relaxed.
func (s Spec) relaxedAccess() verbs.Access {
	if s.NoRelaxedOrdering {
		return 0
	}
	return verbs.AccessRelaxedOrdering
}

// useGRH reports whether a QP's address vector carries a GRH: always on
// RoCE (Ethernet link layer), on InfiniBand only when the GID was given
// (--gid-index, perftest -x); otherwise IB routes by LID alone.
func useGRH(port verbs.PortAttr, gidGiven bool) bool {
	return port.LinkLayer == "Ethernet" || gidGiven
}

// checkChoices refuses, before anything is created, choices the device
// cannot take: a P_Key index past the port's table, a completion vector
// past the device's.
func checkChoices(dev *Device, s Spec) error {
	name := dev.Ctx.Name()
	if n := dev.Port.PKeyTblLen; s.PKeyIndex > 0 && s.PKeyIndex >= n {
		return fmt.Errorf("P_Key index %d out of range: %s port %d has %d P_Key table entries (0..%d)", s.PKeyIndex, name, dev.Port.Port, n, max(n-1, 0))
	}
	if n := dev.Ctx.NumCompVectors(); s.CompVector > 0 && s.CompVector >= n {
		return fmt.Errorf("completion vector %d out of range: %s has %d (0..%d)", s.CompVector, name, n, max(n-1, 0))
	}
	return nil
}

// cqSeq numbers the CQs of spread tests, for their round robin over the
// device's vectors (process-wide: concurrent tests spread too).
var cqSeq atomic.Uint64

// compVector is the completion vector of the next CQ of s on dev.
func compVector(dev *Device, s Spec) int {
	if !s.CompVectorSpread {
		return s.CompVector
	}
	n := dev.Ctx.NumCompVectors()
	if n <= 1 {
		return 0
	}
	return int((cqSeq.Add(1) - 1) % uint64(n))
}

// choicesResult is what the endpoints of a test ran with (eps: the client
// side's measured QPs, in order).
func choicesResult(s Spec, eps ...*endpoint) *result.Choices {
	step, cycle := s.addrStep()
	c := &result.Choices{RelaxedOrdering: !s.NoRelaxedOrdering, AddrStepBytes: step, AddrCycleBytes: cycle, PKeyIndex: s.PKeyIndex,
		RecvAddrStepBytes: s.recvStep(), CompVectors: []int{}}
	for i, e := range eps {
		if e == nil {
			continue
		}
		if i == 0 {
			c.GRH, c.CompVectorsOf = e.grh, e.dev.Ctx.NumCompVectors()
		}
		if e.scq != nil && e.rcq != nil {
			c.CompVectors = append(c.CompVectors, e.scq.Vector(), e.rcq.Vector())
		}
	}
	return c
}
