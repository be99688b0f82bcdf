package endpoint

import (
	"sync/atomic"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
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
//     (RecvStep).
//   - GRH: on InfiniBand the address vector has no GRH unless this side's
//     GID was given with --gid-index (perftest -x); RoCE always needs one.
//   - Completion vectors: every CQ on vector 0 (perftest's --eq_num
//     default), one vector for all (--comp-vector N), or round robin over
//     the device's vectors (--comp-vector spread).
//   - P_Key index: --pkey-index (perftest --pkey_index), default 0, given
//     to the QPs at INIT.

// RecvStep is how far each receive of a SEND bandwidth test lies past the
// previous one's, over the receiver's cycle buffer, bytes: perftest steps
// its receive buffers as it steps its sends, by the receive (the message,
// and on UD the 40-byte GRH before it) rounded up to the cache line, for
// receives up to half the cycle. 0 when the sends do not step (AddrStep),
// for other ops, and for larger receives.
func RecvStep(s spec.Spec) int {
	step, cycle := s.AddrStep()
	if step == 0 || !s.Traits().ConsumesRecv {
		return 0
	}
	n := s.Size
	if s.QPTypeOrDefault() == result.QPTypeUD {
		n += verbs.GRHSize
	}
	if n > cycle/2 {
		return 0
	}
	return (n + spec.CacheLine - 1) / spec.CacheLine * spec.CacheLine
}

// recvSteps is what a SEND bandwidth test's receivers stepped by, as the
// client records it: the server's receives by the step the server gave
// (peer: computed from its own cache line, which may differ from the
// client's), or by the client's own computation when the server did not
// say (an older server, a perftest peer); in a bidirectional test the
// client's own receives (client: 0 otherwise).
func recvSteps(s spec.Spec, peer int) (server, client int) {
	own := RecvStep(s)
	server = own
	if own != 0 && peer != 0 {
		server = peer
	}
	if s.Bidirectional {
		client = own
	}
	return server, client
}

// relaxedAccess is the access flag relaxed ordering adds to the test's
// registrations: AccessRelaxedOrdering unless --disable-pcie-relaxed.
func relaxedAccess(s spec.Spec) verbs.Access {
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
func checkChoices(dev *device.Device, s spec.Spec) error { return s.CheckDeviceChoices(dev.Limits()) }

// cqSeq numbers the CQs of spread tests, for their round robin over the
// device's vectors (process-wide: concurrent tests spread too).
var cqSeq atomic.Uint64

// compVector is the completion vector of the next CQ of s on dev.
func compVector(dev *device.Device, s spec.Spec) int {
	if !s.CompVectorSpread {
		return s.CompVector
	}
	n := dev.Ctx.NumCompVectors()
	if n <= 1 {
		return 0
	}
	return int((cqSeq.Add(1) - 1) % uint64(n))
}

// ChoicesResult is what the endpoints of a test ran with (eps: the client
// side's measured QPs, in order).
func ChoicesResult(s spec.Spec, eps ...*Endpoint) *result.Choices {
	step, cycle := s.AddrStep()
	c := &result.Choices{RelaxedOrdering: !s.NoRelaxedOrdering, AddrStepBytes: step, AddrCycleBytes: cycle, PKeyIndex: s.PKeyIndex,
		CompVectors: []int{}}
	peer := 0
	if len(eps) > 0 && eps[0] != nil {
		peer = eps[0].peerRecvStep
	}
	c.RecvAddrStepBytes, c.ClientRecvAddrStepBytes = recvSteps(s, peer)
	for i, e := range eps {
		if e == nil {
			continue
		}
		if i == 0 && e.Dev != nil {
			c.GRH, c.CompVectorsOf = e.grh, e.Dev.Ctx.NumCompVectors()
		}
		if e.scq != nil && e.rcq != nil {
			c.CompVectors = append(c.CompVectors, e.scq.Vector(), e.rcq.Vector())
		}
	}
	return c
}
