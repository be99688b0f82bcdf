package spec

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Limits on test parameters.
const (
	MaxSize     = 1 << 30 // bytes per message
	MaxDepth    = 1 << 15 // tx/rx depth
	MaxIters    = 1 << 40
	MaxDuration = 24 * time.Hour
	AtomicSize  = 8
	MaxInline   = 1 << 16
	// MaxOutstandingReads bounds --outstanding-reads (max_rd_atomic is a
	// uint8_t); the device's max_qp_rd_atom bounds it further.
	MaxOutstandingReads = 255
	MaxRate             = 1e8 // operations per second
	// MinRate is the lowest --rate, operations per second: below it one
	// operation would wait more than a second for its send time.
	MinRate     = 1
	MaxPostList = 64 // work requests chained per post (verbs.MaxPostList)
)

// Validate checks a spec, naming the bad value and the limit. The server
// runs it on every spec it receives.
func (s Spec) Validate() error {
	if err := s.ValidateStats(); err != nil {
		return err
	}
	if err := s.validateSweep(); err != nil {
		return err
	}
	if err := s.validateShape(); err != nil {
		return err
	}
	if err := s.validateChoices(); err != nil {
		return err
	}
	if _, ok := OpOf(s.Op); !ok {
		return fmt.Errorf("op %q unknown; valid: %s", s.Op, strings.Join(result.Ops, ", "))
	}
	if !contains(result.Modes, s.Mode) {
		return fmt.Errorf("mode %q unknown; valid: %s", s.Mode, strings.Join(result.Modes, ", "))
	}
	if s.Size < 1 || s.Size > MaxSize {
		return fmt.Errorf("size %d bytes out of range 1..%d", s.Size, MaxSize)
	}
	if s.Traits().Atomic && s.Size != AtomicSize {
		return fmt.Errorf("size %d bytes invalid for %s: atomics are %d bytes", s.Size, s.Op, AtomicSize)
	}
	if s.Iters < 0 || s.Iters > MaxIters {
		return fmt.Errorf("iterations %d out of range 1..%d", s.Iters, int64(MaxIters))
	}
	if s.Duration < 0 || s.Duration > MaxDuration {
		return fmt.Errorf("duration %v out of range (0, %v]", s.Duration, MaxDuration)
	}
	if (s.Iters == 0) == (s.Duration == 0) {
		return fmt.Errorf("exactly one of iterations (%d) and duration (%v) must be set", s.Iters, s.Duration)
	}
	if s.WarmupTime < 0 || s.WarmupTime > MaxDuration {
		return fmt.Errorf("warm-up time %v out of range [0, %v]", s.WarmupTime, MaxDuration)
	}
	if s.Warmup < 0 || s.Warmup > MaxIters {
		return fmt.Errorf("warm-up %d iterations out of range 0..%d", s.Warmup, int64(MaxIters))
	}
	if s.TxDepth < 1 || s.TxDepth > MaxDepth {
		return fmt.Errorf("tx depth %d out of range 1..%d", s.TxDepth, MaxDepth)
	}
	if s.RxDepth < 1 || s.RxDepth > MaxDepth {
		return fmt.Errorf("rx depth %d out of range 1..%d", s.RxDepth, MaxDepth)
	}
	if s.CQMod < 1 || s.CQMod > s.TxDepth {
		return fmt.Errorf("CQ moderation %d out of range 1..%d (the tx depth)", s.CQMod, s.TxDepth)
	}
	if s.Inline < 0 || s.Inline > MaxInline {
		return fmt.Errorf("inline size %d bytes out of range 0..%d", s.Inline, MaxInline)
	}
	if s.QPTimeout < 0 || s.QPTimeout > 31 {
		return fmt.Errorf("QP timeout %d out of range 1..31 (4.096 µs × 2^n; perftest's default 14)", s.QPTimeout)
	}
	if s.RetryCount < 0 || s.RetryCount > 7 {
		return fmt.Errorf("retry count %d out of range 1..7", s.RetryCount)
	}
	if s.RNRRetry < 0 || s.RNRRetry > 7 {
		return fmt.Errorf("RNR retry %d out of range 1..7 (7: retry forever)", s.RNRRetry)
	}
	if s.OutstandingReads < 0 || s.OutstandingReads > MaxOutstandingReads {
		return fmt.Errorf("outstanding reads %d out of range 1..%d", s.OutstandingReads, MaxOutstandingReads)
	}
	switch s.InlinePolicy {
	case InlineAuto, InlinePerftest:
		if s.Inline != 0 {
			return fmt.Errorf("inline size %d bytes with inline policy %q: a size needs policy %q", s.Inline, s.InlinePolicy, InlineSize)
		}
	case InlineSize:
	default:
		return fmt.Errorf("inline policy %q unknown; valid: %q (auto), %q, %q", s.InlinePolicy, InlineAuto, InlineSize, InlinePerftest)
	}
	if s.Transport != "" && s.Transport != result.TransportRDMA && s.Transport != result.TransportTCP {
		return fmt.Errorf("transport %q unknown; valid: rdma, tcp", s.Transport)
	}
	if s.Transport == result.TransportTCP && !s.Traits().TCP {
		return fmt.Errorf("op %s has no TCP equivalent: the TCP baseline runs %s (ping-pong and streaming)", s.Op, tcpOps())
	}
	if !(s.Rate == 0 || (s.Rate >= MinRate && s.Rate <= MaxRate)) { // NaN fails both
		return fmt.Errorf("rate %g ops/s out of range %g..%g", s.Rate, float64(MinRate), float64(MaxRate))
	}
	if s.Rate > 0 && s.Mode != result.ModeLat {
		return fmt.Errorf("rate applies to latency tests (open loop), not to mode %s", s.Mode)
	}
	if s.Schedule != "" && s.Schedule != result.ScheduleConstant && s.Schedule != result.SchedulePoisson {
		return fmt.Errorf("schedule %q unknown; valid: constant, poisson", s.Schedule)
	}
	if s.SL < 0 || s.SL > 15 {
		return fmt.Errorf("service level %d out of range 0..15", s.SL)
	}
	if s.TClass < 0 || s.TClass > 255 {
		return fmt.Errorf("traffic class %d out of range 0..255", s.TClass)
	}
	if s.PostList < 0 || s.PostList > MaxPostList || (s.PostList > 1 && s.PostList > s.TxDepth) {
		return fmt.Errorf("post list %d out of range 0..%d (and at most the tx depth %d)", s.PostList, MaxPostList, s.TxDepth)
	}
	if s.Event && s.Traits().LatPollsMemory && s.Mode == result.ModeLat {
		return fmt.Errorf("event mode needs a completion per message, and WRITE latency detects arrival by polling memory (perftest offers no -e for WRITE either): use send or read")
	}
	if s.Event && s.Transport == result.TransportTCP {
		return fmt.Errorf("event mode applies to RDMA completion queues, not to the TCP baseline")
	}
	if s.Load != nil {
		if s.Mode != result.ModeLat || s.Transport == result.TransportTCP {
			return fmt.Errorf("load applies to RDMA latency tests, not to %s %s", s.Transport, s.Mode)
		}
		if err := s.Load.validate(); err != nil {
			return err
		}
	}
	if !contains(result.QPTypes, s.QPTypeOrDefault()) {
		return fmt.Errorf("QP type %q unknown; valid: %s", s.QPType, strings.Join(result.QPTypes, ", "))
	}
	if s.QPType != "" && s.QPType != result.QPTypeRC && s.Transport == result.TransportTCP {
		return fmt.Errorf("QP type %s applies to RDMA tests, not to the TCP baseline", s.QPType)
	}
	switch s.QPTypeOrDefault() {
	case result.QPTypeUC:
		if !s.Traits().Carries(result.QPTypeUC) {
			return fmt.Errorf("op %s is not supported on UC QPs: UC carries %s only (READ and atomics need RC)", s.Op, carriedBy(result.QPTypeUC))
		}
	case result.QPTypeUD:
		if !s.Traits().Carries(result.QPTypeUD) {
			return fmt.Errorf("op %s is not supported on UD QPs: UD carries %s only (at most the path MTU per message)", s.Op, carriedBy(result.QPTypeUD))
		}
		if s.MTU != 0 && s.Size > s.MTU {
			return fmt.Errorf("size %d bytes exceeds the path MTU %d bytes: a UD message is one packet (use a size of at most %d, or --qp-type rc/uc)", s.Size, s.MTU, s.MTU)
		}
	}
	if s.QPs < 0 || s.QPs > MaxQPs {
		return fmt.Errorf("QPs %d out of range 1..%d (--qps)", s.QPs, MaxQPs)
	}
	if s.Threads < 0 || s.Threads > s.NumQPs() {
		return fmt.Errorf("threads %d out of range 1..%d (--threads: at most --qps)", s.Threads, s.NumQPs())
	}
	if s.NumQPs() > 1 {
		switch {
		case s.Mode == result.ModeLat:
			return fmt.Errorf("--qps %d applies to bandwidth tests: latency runs on one QP (use --mode bw, or --load-qps for latency under load)", s.QPs)
		case s.Transport == result.TransportTCP:
			return fmt.Errorf("--qps %d applies to RDMA tests, not to the TCP baseline", s.QPs)
		case s.Event:
			return fmt.Errorf("--event with --qps %d is not supported: a thread drives its QPs round robin by polling", s.QPs)
		case s.Iters > 0 && s.Iters < int64(s.NumQPs()):
			return fmt.Errorf("iterations %d fewer than --qps %d: iterations are the total over all QPs", s.Iters, s.QPs)
		}
	}
	if s.MTU != 0 && (s.MTU < 256 || s.MTU > 4096 || bits.OnesCount(uint(s.MTU)) != 1) {
		return fmt.Errorf("MTU %d invalid: use 256, 512, 1024, 2048 or 4096", s.MTU)
	}
	if s.RDMACM {
		switch {
		case s.Transport == result.TransportTCP:
			return fmt.Errorf("--rdma-cm applies to RDMA tests, not to the TCP baseline")
		case s.QPTypeOrDefault() != result.QPTypeRC:
			return fmt.Errorf("--rdma-cm connects RC QPs only, not --qp-type %s", s.QPType)
		case s.MTU != 0:
			return fmt.Errorf("--mtu %d with --rdma-cm: rdma_cm sets the path MTU from both ports (lower the netdev MTU instead)", s.MTU)
		case s.SL != 0:
			return fmt.Errorf("--sl %d with --rdma-cm: rdma_cm derives the service level from the route (use --tclass for the ToS)", s.SL)
		}
	}
	if err := s.validateBidir(); err != nil {
		return err
	}
	if err := s.validateVerify(); err != nil {
		return err
	}
	if err := s.validateSRQ(); err != nil {
		return err
	}
	if err := s.validateWorkload(); err != nil {
		return err
	}
	return s.validateMR()
}

// carriedBy names the ops QP type qpType carries ("send and write").
func carriedBy(qpType string) string {
	return andList(opNames(func(t OpTraits) bool { return t.Carries(qpType) }))
}

// tcpOps names the ops the TCP baseline runs.
func tcpOps() string { return orList(opNames(func(t OpTraits) bool { return t.TCP })) }
