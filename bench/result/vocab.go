package result

import (
	"strconv"
)

// The vocabulary of tests and results: the strings the JSON carries, the
// flags take and every package compares against. One list; the engine maps
// them to verbs opcodes in one table (bench.opcodeOf).

// Operations and modes a test can measure.
const (
	OpSend     = "send"
	OpWrite    = "write"
	OpRead     = "read"
	OpFetchAdd = "fetch_add"
	OpCmpSwap  = "cmp_swap"
	// OpWriteImm is RDMA WRITE with immediate data: the payload lands in
	// the target's memory and the 32-bit immediate in a receive completion
	// there (IBV_WC_RECV_RDMA_WITH_IMM). OpSendImm is SEND with immediate
	// (IBV_WC_RECV with IBV_WC_WITH_IMM). iWARP carries neither.
	OpWriteImm = "write_imm"
	OpSendImm  = "send_imm"

	ModeLat = "lat"
	ModeBW  = "bw"
)

// Ops lists the operations in their canonical order.
var Ops = []string{OpSend, OpWrite, OpRead, OpFetchAdd, OpCmpSwap, OpWriteImm, OpSendImm}

// Modes lists the modes in their canonical order.
var Modes = []string{ModeLat, ModeBW}

// QP types a test can use.
const (
	QPTypeRC = "rc"
	QPTypeUC = "uc"
	QPTypeUD = "ud"
)

// QPTypes lists the QP types in their canonical order.
var QPTypes = []string{QPTypeRC, QPTypeUC, QPTypeUD}

// Transports and schedules.
const (
	TransportRDMA = "rdma"
	TransportTCP  = "tcp"

	ScheduleConstant = "constant"
	SchedulePoisson  = "poisson"
)

// Transports and Schedules list them, the default first (--transport,
// --schedule).
var (
	Transports = []string{TransportRDMA, TransportTCP}
	Schedules  = []string{ScheduleConstant, SchedulePoisson}
)

// Bandwidth units accepted by Bandwidth.In and WriteBandwidthTable.
const (
	UnitMiB = "MiB" // MiB/sec (2^20 bytes/s), perftest's default
	UnitMB  = "MB"  // MB/sec (10^6 bytes/s)
	UnitGb  = "Gb"  // Gb/sec (10^9 bit/s), perftest's --report_gbits
)

// Units lists the bandwidth units, the default first (--unit).
var Units = []string{UnitMiB, UnitMB, UnitGb}

// Memory registration modes of the data path (Spec.MRMode, --mr-mode).
const (
	// MRModePool: each test registers a fresh pool once (verbs.Pool, one
	// MR per slab) and every QP of the test takes its buffer from it.
	MRModePool = "pool"
	// MRModePerOp: the client registers the local buffer of every
	// operation right before its post and deregisters it at its completion,
	// inside the C loop; the peer's target and the server stay pooled.
	MRModePerOp = "per-op"
	// MRModeODP: the pools are On-Demand Paging MRs (IBV_ACCESS_ON_DEMAND),
	// on both sides; refused before any traffic where the device has no ODP.
	MRModeODP = "odp"
)

// MRModes lists the memory registration modes, the default first.
var MRModes = []string{MRModePool, MRModePerOp, MRModeODP}

// Key identifies a test across runs and labels it everywhere (progress
// lines, errors, compare rows): op, mode, message size and transport (""
// for RDMA, the default).
type Key struct {
	Op        string
	Mode      string
	SizeBytes int
	Transport string
}

// KeyOf returns the key of r; transport "rdma" counts as "".
func KeyOf(r *Result) Key {
	return NewKey(r.Op, r.Mode, r.SizeBytes, r.Transport)
}

// NewKey returns the key of a test; transport "rdma" counts as "".
func NewKey(op, mode string, size int, transport string) Key {
	if transport == TransportRDMA {
		transport = ""
	}
	return Key{Op: op, Mode: mode, SizeBytes: size, Transport: transport}
}

// String names the test as every table and line names it, such as
// "send lat 2B" or "write bw 64K" (SizeName), with the transport in front
// when it is not RDMA: "tcp send lat 2B".
func (k Key) String() string {
	s := k.Op + " " + k.Mode + " " + SizeName(k.SizeBytes)
	if k.Transport != "" {
		s = k.Transport + " " + s
	}
	return s
}

// SizeName is a message size as the tables and the gate's lines write it:
// in K, M or G where the binary unit divides it (1K, 64K, 1M; what --size
// takes), else in bytes with a B (2B, 1000B).
func SizeName(b int) string {
	for _, u := range []struct {
		n   int
		suf string
	}{{1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.Itoa(b/u.n) + u.suf
		}
	}
	return strconv.Itoa(b) + "B"
}
