package spec

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The workload knobs (issue 24): where each operation lands and what it
// carries. --region spreads the operations' remote targets over a
// registered region larger than one message, --access says how each
// operation picks its offset, --mrs splits the region (and the
// initiator's local buffers) into several MRs, --sge splits each message
// over several scatter/gather entries. Their zero values are today's
// behaviour, perftest's: one target buffer, one MR per side, one SGE.
//
// The offsets: the target region is MRs memory regions of MRLen bytes
// each. Operation k picks an MR and an offset inside it:
//
//   - seq: MR k mod MRs, offset ((k div MRs) mod slots) × size: each MR
//     walked message by message, the MRs round robin;
//   - stride:N: as seq, N bytes between offsets instead of the message;
//   - random: MR and slot drawn uniformly (xorshift64*, seeded by Seed;
//     QP i of a test draws from Seed + i), offsets message-aligned.
//
// The choice lives in the C loop (verbs/engine.c, spread_wr): no cgo
// call per operation.

// The access patterns (Spec.Access).
const (
	AccessSeq    = "seq"
	AccessRandom = "random"
	AccessStride = "stride"
)

// AccessArgs are --access's spellings, the default first; stride takes
// its step after the colon (stride:N, bytes).
var AccessArgs = []string{AccessSeq, AccessRandom, AccessStride + ":"}

// Workload limits.
const (
	// MaxRegion bounds --region, bytes (1 TiB; the memory budget and the
	// device's max_mr_size bound it further).
	MaxRegion = int64(1) << 40
	// MaxMRs bounds --mrs (the device's max_mr bounds it further).
	MaxMRs = 1 << 20
	// MaxSGE bounds --sge (the device's max_sge, and max_sge_rd for READ,
	// bound it further).
	MaxSGE = 64
	// MaxIdleQPs bounds --qps-idle (the device's max_qp and the budget's
	// --max-qps bound it further).
	MaxIdleQPs = 1 << 16
	// DefaultSeed seeds --access random when --seed is not given: runs
	// repeat the same offsets unless told otherwise.
	DefaultSeed = 1
	// spreadAlign is the alignment of each MR of a spread region (and of
	// the initiator's per-MR buffers), bytes.
	spreadAlign = 64
)

// Spread reports whether the operations spread over a region or several
// MRs (--region, --mrs above 1).
func (s Spec) Spread() bool { return s.Region > 0 || s.MRs > 1 }

// NumMRs is the MRs the operations spread over (at least 1).
func (s Spec) NumMRs() int { return max(s.MRs, 1) }

// NumSGE is the SGEs per work request (at least 1).
func (s Spec) NumSGE() int { return max(s.SGE, 1) }

// AccessOrDefault is the access pattern, "seq" when unset.
func (s Spec) AccessOrDefault() string {
	if s.Access == "" {
		return AccessSeq
	}
	return s.Access
}

// SpreadStep is the distance between two offsets inside one MR, bytes:
// the stride, or the message.
func (s Spec) SpreadStep() int64 {
	if s.AccessOrDefault() == AccessStride {
		return s.Stride
	}
	return int64(s.Size)
}

// RegionLen is the target region's size, bytes: --region, or without it
// (--mrs N alone) one message slot (the message rounded up to 64 B, or
// the stride) per MR.
func (s Spec) RegionLen() int64 {
	if s.Region > 0 {
		return s.Region
	}
	if !s.Spread() || s.LocalOnly() {
		return 0
	}
	slot := max((int64(s.Size)+spreadAlign-1)&^(spreadAlign-1), s.Stride)
	return slot * int64(s.NumMRs())
}

// LocalOnly reports whether the operations spread over the initiator's
// MRs alone: an op without a remote address (SEND) with --mrs.
func (s Spec) LocalOnly() bool { return s.Spread() && s.Traits().Access == AccessNone }

// MRLen is the length of each MR of the target region, bytes: the region
// shared evenly, rounded down to 64 B.
func (s Spec) MRLen() int64 {
	return s.RegionLen() / int64(s.NumMRs()) &^ (spreadAlign - 1)
}

// Slots is how many offsets each MR of the target region holds.
func (s Spec) Slots() int64 {
	l, st := s.MRLen(), s.SpreadStep()
	if l < int64(s.Size) || st < 1 {
		return 0
	}
	return (l-int64(s.Size))/st + 1
}

// LocalSlot is the length of each of the initiator's local buffers when
// the operations spread over several MRs (one per MR, each its own MR),
// bytes: the message rounded up to 64 B.
func (s Spec) LocalSlot() int64 { return (int64(s.Size) + spreadAlign - 1) &^ (spreadAlign - 1) }

// ParseAccess reads --access: seq, random or stride:N (N bytes, with K, M
// or G suffixes, up to 1G). It returns the pattern and the stride (0 unless stride).
func ParseAccess(v string) (access string, stride int64, err error) {
	t := strings.ToLower(strings.TrimSpace(v))
	switch {
	case t == AccessSeq || t == AccessRandom:
		return t, 0, nil
	case strings.HasPrefix(t, AccessStride+":"):
		n, err := ParseSize(strings.TrimPrefix(t, AccessStride+":"))
		if err != nil {
			return "", 0, fmt.Errorf("--access %q: stride:N wants N bytes, at least 1 (e.g. stride:4K)", v)
		}
		return AccessStride, int64(n), nil
	}
	return "", 0, fmt.Errorf("--access %q unknown; valid: seq, random, stride:N (N bytes)", v)
}

// AccessLabel is the access pattern as results and tables show it:
// "seq", "random" or "stride:4096".
func (s Spec) AccessLabel() string {
	if a := s.AccessOrDefault(); a != AccessStride {
		return a
	}
	return fmt.Sprintf("%s:%d", AccessStride, s.Stride)
}

// WorkloadLabel is what the knobs add to a test's description, e.g. " over
// a 1073741824-byte region in 4 MRs + 16 idle QPs"; "" when none is set.
func (s Spec) WorkloadLabel() string {
	var d string
	if s.Spread() && !s.LocalOnly() {
		d += fmt.Sprintf(" over a %d-byte region in %d MRs", s.RegionLen(), s.NumMRs())
	} else if s.Spread() {
		d += fmt.Sprintf(" over %d local MRs", s.NumMRs())
	}
	if s.IdleQPs > 0 {
		d += fmt.Sprintf(" + %d idle QPs", s.IdleQPs)
	}
	return d
}

// validateWorkload checks the workload knobs, naming the value and the limit.
func (s Spec) validateWorkload() error {
	switch {
	case s.Region < 0 || s.Region > MaxRegion:
		return fmt.Errorf("region %d bytes out of range 0..%d (--region)", s.Region, MaxRegion)
	case s.MRs < 0 || s.MRs > MaxMRs:
		return fmt.Errorf("MRs %d out of range 1..%d (--mrs)", s.MRs, MaxMRs)
	case s.SGE < 0 || s.SGE > MaxSGE:
		return fmt.Errorf("SGEs %d out of range 1..%d (--sge)", s.SGE, MaxSGE)
	case s.Access != "" && s.Access != AccessSeq && s.Access != AccessRandom && s.Access != AccessStride:
		return fmt.Errorf("access %q unknown; valid: seq, random, stride:N (--access)", s.Access)
	case (s.Stride != 0) != (s.AccessOrDefault() == AccessStride):
		return fmt.Errorf("stride %d bytes with access %s: a stride goes with --access stride:N only", s.Stride, s.AccessOrDefault())
	case s.Stride < 0 || s.Stride > MaxRegion:
		return fmt.Errorf("stride %d bytes out of range 1..%d", s.Stride, MaxRegion)
	case s.Seed != 0 && s.AccessOrDefault() != AccessRandom:
		return fmt.Errorf("seed %d with access %s: a seed goes with --access random only", s.Seed, s.AccessOrDefault())
	case s.IdleQPs < 0 || s.IdleQPs > MaxIdleQPs:
		return fmt.Errorf("idle QPs %d out of range 0..%d (--qps-idle)", s.IdleQPs, MaxIdleQPs)
	case s.IdleQPs > 0 && s.Transport == result.TransportTCP:
		return fmt.Errorf("--qps-idle %d applies to RDMA tests, not to the TCP baseline", s.IdleQPs)
	case s.IdleQPs > 0 && s.RDMACM:
		return fmt.Errorf("--qps-idle %d with --rdma-cm is not supported: idle QPs connect by the QP-number exchange", s.IdleQPs)
	}
	if s.SGE > 1 {
		switch {
		case s.Transport == result.TransportTCP:
			return fmt.Errorf("--sge %d applies to RDMA work requests, not to the TCP baseline", s.SGE)
		case s.Traits().Atomic:
			return fmt.Errorf("--sge %d: an atomic's 8 bytes are one scatter/gather entry", s.SGE)
		case s.Size < s.SGE:
			return fmt.Errorf("--sge %d: a %d-byte message cannot be split over %d SGEs (at least 1 byte each)", s.SGE, s.Size, s.SGE)
		case s.MRModeOrDefault() == result.MRModePerOp:
			return fmt.Errorf("--sge %d with --mr-mode per-op: per-op registration registers one buffer per operation", s.SGE)
		case s.Bidirectional:
			return fmt.Errorf("--sge %d with -b is not supported: the bidirectional loop posts one SGE", s.SGE)
		}
	}
	if !s.Spread() {
		if s.Access != "" || s.Seed != 0 {
			return fmt.Errorf("--access %s applies with --region or --mrs: without them every operation uses the same target", s.AccessLabel())
		}
		return nil
	}
	t := s.Traits()
	what := fmt.Sprintf("--mrs %d", s.NumMRs())
	if s.Region > 0 {
		what = fmt.Sprintf("--region %d", s.Region)
	}
	switch {
	case s.Transport == result.TransportTCP:
		return fmt.Errorf("%s applies to RDMA tests, not to the TCP baseline", what)
	case t.Access == AccessNone && s.Region > 0:
		return fmt.Errorf("%s spreads the remote target of READ, WRITE and atomics; %s has no remote address (its receiver's buffers are its own; --mrs spreads its local buffers)", what, s.Op)
	case s.Mode == result.ModeLat && t.PingPong:
		return fmt.Errorf("%s: %s latency is a ping-pong that polls one buffer's last byte; spread its targets in a bandwidth test (--mode bw) or measure READ latency", what, s.Op)
	case s.MRModeOrDefault() != result.MRModePool:
		return fmt.Errorf("%s needs --mr-mode pool (the region is registered once, up front), not %s", what, s.MRModeOrDefault())
	case s.Bidirectional:
		return fmt.Errorf("%s with -b is not supported: only the client's operations spread", what)
	case s.Verify:
		return fmt.Errorf("%s with --verify is not supported: the verify pass checks the first message's buffer", what)
	case t.Atomic && s.AccessOrDefault() == AccessStride && s.Stride%AtomicSize != 0:
		return fmt.Errorf("stride %d bytes: atomics need 8-byte aligned targets (a multiple of 8)", s.Stride)
	case s.LocalOnly():
		return nil // --mrs spreads the sender's local buffers only
	case s.Slots() < 1:
		return fmt.Errorf("region %d bytes over %d MRs gives %d-byte MRs, too small for one %d-byte message", s.RegionLen(), s.NumMRs(), s.MRLen(), s.Size)
	}
	return nil
}

// SeedOrDefault is the seed of --access random (DefaultSeed when unset); 0
// for the other patterns.
func (s Spec) SeedOrDefault() uint64 {
	if s.AccessOrDefault() != AccessRandom {
		return 0
	}
	if s.Seed == 0 {
		return DefaultSeed
	}
	return s.Seed
}

// IdleSpec is the spec of each idle QP (--qps-idle): an RC SEND
// endpoint (no remote access granted) of one 64-byte message and depth 1
// that never posts, on the test's path settings.
func (s Spec) IdleSpec() Spec {
	return Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 64, Iters: 1, TxDepth: 1, CQMod: 1, RxDepth: 1,
		MTU: s.MTU, SL: s.SL, TClass: s.TClass, NoAddrStep: true, CompVector: s.CompVector, CompVectorSpread: s.CompVectorSpread, PKeyIndex: s.PKeyIndex}
}

// WorkloadResult is what results record of the knobs, or nil when none
// is set (one target, one MR, one SGE, no idle QPs).
func (s Spec) WorkloadResult() *result.Workload {
	if !s.Spread() && s.SGE <= 1 && s.IdleQPs == 0 {
		return nil
	}
	w := &result.Workload{MRs: s.NumMRs(), SGE: s.NumSGE(), IdleQPs: s.IdleQPs}
	if s.Spread() {
		w.Access, w.Seed = s.AccessOrDefault(), s.SeedOrDefault()
	}
	if s.Spread() && !s.LocalOnly() {
		w.RegionBytes, w.MRBytes, w.Slots, w.StrideBytes = s.RegionLen(), s.MRLen(), s.Slots(), s.Stride
	}
	return w
}

// CheckDeviceWorkload refuses knobs the device d cannot take, naming the
// limit (wrapping ErrNotSupported): more SGEs than max_sge (max_sge_rd for
// READ), more MRs than max_mr (the test's pool MR counted), MRs larger
// than max_mr_size.
func (s Spec) CheckDeviceWorkload(d DeviceLimits) error {
	if n := s.NumSGE(); n > 1 {
		switch {
		case d.MaxSGE > 0 && n > d.MaxSGE:
			return fmt.Errorf("--sge %d is above %s's max_sge %d: %w", n, d.Name, d.MaxSGE, ErrNotSupported)
		case s.Traits().Access == AccessRemoteRead && d.MaxSGERd > 0 && n > d.MaxSGERd:
			return fmt.Errorf("--sge %d is above %s's max_sge_rd %d (SGEs of a READ): %w", n, d.Name, d.MaxSGERd, ErrNotSupported)
		}
	}
	if err := s.checkDeviceLoadMRs(d); err != nil {
		return err
	}
	if !s.Spread() {
		return nil
	}
	switch {
	case d.MaxMR > 0 && s.NumMRs()+1 > d.MaxMR:
		return fmt.Errorf("--mrs %d (plus the test's pool MR) is above %s's max_mr %d: %w", s.NumMRs(), d.Name, d.MaxMR, ErrNotSupported)
	case !s.LocalOnly() && d.MaxMRSize > 0 && uint64(s.MRLen()) > d.MaxMRSize:
		return fmt.Errorf("region %d bytes over %d MRs needs %d-byte MRs, above %s's max_mr_size %d: %w",
			s.RegionLen(), s.NumMRs(), s.MRLen(), d.Name, d.MaxMRSize, ErrNotSupported)
	}
	return nil
}
