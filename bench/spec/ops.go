package spec

import (
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The op table: one row per operation a test can measure (Spec.Op), with
// every trait that the rest of rdmabench switches on. Code asks the table
// (OpOf, Spec.Traits), never the op's name. A new op is one row here, its
// name in result.Ops (the JSON vocabulary), its work request and ODP
// needs in bench/endpoint (OpVerbs, bench/endpoint/opverbs.go) and its C code in verbs;
// TestOpTable and bench/endpoint's TestOpVerbs hold the three lists together
// (docs/architecture.md, "Adding an op", lists every file).

// Access is the remote access a test's target memory grants its peer for
// an op (mapped to verbs.Access in bench).
type Access uint8

// The remote accesses an op can need.
const (
	AccessNone Access = iota
	AccessRemoteWrite
	AccessRemoteRead
	AccessRemoteAtomic
)

// Verifier values: the side that checks a --verify pass.
const (
	VerifyServer = "server" // what arrived: SEND and WRITE (and their immediates)
	VerifyClient = "client" // what the client's READ fetched
)

// OpTraits is one row of the op table.
type OpTraits struct {
	// Name is Spec.Op and result.Result.Op ("send", "write", ...).
	Name string
	// Atomic: an 8-byte atomic on remote memory: AtomicSize bytes whatever
	// the size list, the device needs atomic_cap, nothing to --verify.
	Atomic bool
	// ReadAtomic: the op uses the peer's READ/atomic responder resources
	// (max_rd_atomic, --outstanding-reads).
	ReadAtomic bool
	// Access is what the target side's memory grants the initiator.
	Access Access
	// ConsumesRecv: every message takes a posted receive at the target
	// (receives are posted, --srq applies, a lost UC/UD message leaves its
	// receiver short, bidirectional tests run the send-and-receive loop).
	ConsumesRecv bool
	// Imm: every message carries 32 bits of immediate data, which its
	// receive completion delivers (wc.imm_data, checked by --verify);
	// iWARP has no immediate data, so an iWARP device refuses the op.
	Imm bool
	// PingPong: a latency test is a ping-pong, the server answering each
	// message with the same op (so the client's memory is a target too),
	// and its closed-loop latency is half the round trip (HalfRTT). Ops
	// without it measure one full round trip.
	PingPong bool
	// LatPollsMemory: the latency ping-pong detects a message's arrival by
	// polling the last byte of memory, not by a completion (no --event).
	LatPollsMemory bool
	// Inline: the initiator posts the payload (SEND, WRITE), so it can go
	// inline, copied by the CPU without a registration; READ and atomics
	// post none.
	Inline bool
	// Verifier is who checks the payload in a --verify pass: VerifyServer,
	// VerifyClient, or "" (no payload to check).
	Verifier string
	// QPTypes are the QP types that carry the op.
	QPTypes []string
	// Default: in the op list of a plan that names none (where the QP
	// type carries it).
	Default bool
	// Load: may stream as the background load of a latency test (the
	// server's CPU stays idle).
	Load bool
	// TCP: the kernel TCP baseline has an equivalent.
	TCP bool
	// PerftestInline and PerftestInlineUD are perftest's default inline
	// sizes of a latency test on RC/UC and on UD QPs, bytes ("Optimal
	// Values for Inline" in perftest_parameters.h, 6.x); 0: none.
	PerftestInline, PerftestInlineUD int
	// Interval and PerOpInterval say what one latency sample is (Spec.TimedInterval),
	// without and with per-operation registration (reg: its description).
	Interval      string
	PerOpInterval func(reg string) string
}

var (
	rcOnly = []string{result.QPTypeRC}
	ucRC   = []string{result.QPTypeRC, result.QPTypeUC}
	allQPs = []string{result.QPTypeRC, result.QPTypeUC, result.QPTypeUD}
)

// opTable is the op table, in result.Ops order.
var opTable = []OpTraits{
	{Name: result.OpSend, Access: AccessNone, ConsumesRecv: true, PingPong: true, Inline: true, Verifier: VerifyServer,
		QPTypes: allQPs, Default: true, TCP: true, PerftestInline: 236, PerftestInlineUD: 188,
		Interval: "half of a SEND/RECV ping-pong round trip (RTT/2), from post to the reply's receive completion",
		PerOpInterval: func(reg string) string {
			return "half of a SEND/RECV ping-pong round trip (RTT/2) with " + reg + "; one sample runs from before the " +
				"registration, over the reply's receive completion and the send completion, to after the deregistration"
		}},
	{Name: result.OpWrite, Access: AccessRemoteWrite, PingPong: true, LatPollsMemory: true, Inline: true, Verifier: VerifyServer,
		QPTypes: ucRC, Default: true, Load: true, PerftestInline: 220,
		Interval: "half of an RDMA WRITE ping-pong round trip (RTT/2), from post until the reply's last byte lands in memory",
		PerOpInterval: func(reg string) string {
			return "half of an RDMA WRITE ping-pong round trip (RTT/2) with " + reg + "; one sample runs from before the " +
				"registration, over the reply's last byte and the WRITE completion, to after the deregistration"
		}},
	{Name: result.OpRead, ReadAtomic: true, Access: AccessRemoteRead, Verifier: VerifyClient,
		QPTypes: rcOnly, Default: true, Load: true,
		Interval: "one full RDMA READ round trip (RTT), from post to its completion",
		PerOpInterval: func(reg string) string {
			return "one full RDMA READ round trip (RTT) with " + reg + ": from before the registration of the local sink " +
				"to after its deregistration"
		}},
	{Name: result.OpFetchAdd, Atomic: true, ReadAtomic: true, Access: AccessRemoteAtomic, QPTypes: rcOnly,
		Interval: atomicInterval, PerOpInterval: atomicPerOpInterval},
	{Name: result.OpCmpSwap, Atomic: true, ReadAtomic: true, Access: AccessRemoteAtomic, QPTypes: rcOnly,
		Interval: atomicInterval, PerOpInterval: atomicPerOpInterval},
	// perftest --write_with_imm: the payload lands in memory, the receive
	// completion (IBV_WC_RECV_RDMA_WITH_IMM) tells the target it has.
	{Name: result.OpWriteImm, Access: AccessRemoteWrite, ConsumesRecv: true, Imm: true, PingPong: true, Inline: true,
		Verifier: VerifyServer, QPTypes: ucRC, PerftestInline: 220,
		Interval: "half of an RDMA WRITE with immediate ping-pong round trip (RTT/2), from post to the reply's receive completion",
		PerOpInterval: func(reg string) string {
			return "half of an RDMA WRITE with immediate ping-pong round trip (RTT/2) with " + reg + "; one sample runs from " +
				"before the registration, over the reply's receive completion and the WRITE completion, to after the deregistration"
		}},
	// perftest --send_with_imm: a SEND whose receive completion carries
	// IBV_WC_WITH_IMM and the immediate.
	{Name: result.OpSendImm, Access: AccessNone, ConsumesRecv: true, Imm: true, PingPong: true, Inline: true,
		Verifier: VerifyServer, QPTypes: ucRC, PerftestInline: 236,
		Interval: "half of a SEND with immediate ping-pong round trip (RTT/2), from post to the reply's receive completion",
		PerOpInterval: func(reg string) string {
			return "half of a SEND with immediate ping-pong round trip (RTT/2) with " + reg + "; one sample runs from before the " +
				"registration, over the reply's receive completion and the send completion, to after the deregistration"
		}},
}

const atomicInterval = "one full atomic round trip (RTT), from post to its completion"

func atomicPerOpInterval(reg string) string {
	return "one full atomic round trip (RTT) with " + reg + ": from before the registration of the 8-byte result " +
		"buffer to after its deregistration"
}

// Ops are the op table's rows, in result.Ops order. Do not modify.
func Ops() []OpTraits { return opTable }

// OpOf is the row of op, and whether there is one.
func OpOf(op string) (OpTraits, bool) {
	for _, t := range opTable {
		if t.Name == op {
			return t, true
		}
	}
	return OpTraits{}, false
}

// Traits is the row of s.Op (the zero row, which has no trait, for an
// unknown op: Validate refuses it).
func (s Spec) Traits() OpTraits { t, _ := OpOf(s.Op); return t }

// Carries reports whether QP type qpType ("" for rc) carries the op.
func (t OpTraits) Carries(qpType string) bool {
	if qpType == "" {
		qpType = result.QPTypeRC
	}
	return contains(t.QPTypes, qpType)
}

// opNames are the names of the rows with trait keep, in table order.
func opNames(keep func(OpTraits) bool) []string {
	var out []string
	for _, t := range opTable {
		if keep(t) {
			out = append(out, t.Name)
		}
	}
	return out
}

// andList joins names as "a", "a and b" or "a, b and c".
func andList(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return strings.Join(names, "")
}

// orList joins names as "a", "a or b" or "a, b or c".
func orList(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return strings.Join(names, "")
}
