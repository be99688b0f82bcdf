package spec

import (
	"fmt"
	"os"

	"github.com/rdmabench/rdmabench/bench/result"
)

// MaxAddrCycle bounds Spec.AddrCycle, bytes (a 64 KiB page with room).
const MaxAddrCycle = 1 << 20

// MaxPKeyIndex bounds --pkey-index (a P_Key table holds at most 65536).
const MaxPKeyIndex = 0xffff

// MaxCompVector bounds --comp-vector (the device's count bounds it further).
const MaxCompVector = 1 << 16

// PageSize is the default cycle buffer, bytes (perftest's: the page size).
var PageSize = os.Getpagesize()

// choiceDefaults fills the choices' defaults: the cycle buffer of a
// bandwidth test (or of a latency test's load QPs) that steps its
// addresses, so that the server sizes its areas from the client's page.
func (s Spec) choiceDefaults() Spec {
	if (s.Mode == result.ModeBW || s.Load != nil) && s.Transport != result.TransportTCP && !s.NoAddrStep && s.AddrCycle == 0 {
		s.AddrCycle = PageSize
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

// CacheLine is the cache line AddrStep rounds stepped messages up to, bytes:
// DefaultCacheLine until package bench sets this machine's (from sysfs, at
// start), as perftest rounds to its CPU's.
var CacheLine = DefaultCacheLine

// AddrStep is the address stepping of s's bandwidth work requests: the
// step (the message rounded up to CacheLine) and the cycle, bytes;
// 0, 0 when off: --no-addr-step, latency tests, TCP, and messages above
// half the cycle (perftest's rule).
func (s Spec) AddrStep() (step, cycle int) {
	cycle = s.AddrCycle
	if cycle == 0 {
		cycle = PageSize
	}
	if s.NoAddrStep || s.Mode != result.ModeBW || s.Transport == result.TransportTCP || s.Size > cycle/2 || s.Spread() { // a spread test picks its own offsets (workload.go)
		return 0, 0
	}
	return (s.Size + CacheLine - 1) / CacheLine * CacheLine, cycle
}

// TargetLen is how many bytes of a side's target area the peer's work
// requests reach: the message, or the whole cycle when they step.
func (s Spec) TargetLen() int {
	if _, cycle := s.AddrStep(); cycle > 0 {
		return max(s.Size, cycle)
	}
	return s.Size
}
