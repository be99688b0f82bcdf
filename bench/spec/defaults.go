package spec

import "github.com/rdmabench/rdmabench/bench/result"

// Every default of a test, in one place. docs/defaults.md sets them beside
// perftest's, row by row; TestDefaultsMatchDoc pins the two together.
const (
	DefaultPort        = 18515    // TCP control port (perftest's)
	DefaultLatIters    = 10000    // measured iterations of a latency test
	DefaultBWIters     = 5000     // measured iterations of a bandwidth test
	DefaultLatSize     = 2        // bytes, latency tests without --size
	DefaultBWSize      = 65536    // bytes, bandwidth tests without --size
	DefaultTxDepth     = 128      // outstanding sends of a bandwidth test
	DefaultCQMod       = 100      // one signaled send every N (at most the tx depth)
	DefaultRxDepth     = 512      // receives kept posted
	DefaultLatWarmup   = 100      // at least this many warm-up iterations (else 1 %)
	DefaultLoadTxDepth = 128      // outstanding sends of each load QP
	DefaultLoadSize    = 64 << 10 // bytes per load message (--load-size)
	DefaultQPTimeout   = 14       // 4.096 µs × 2^14 ≈ 67 ms per ACK timeout (perftest -u)
	DefaultRetryCount  = 7        // transport retries
	DefaultRNRRetry    = 7        // receiver-not-ready retries: 7 retries forever
	DefaultRNRTimer    = 12       // min_rnr_timer 12: 0.64 ms (not a flag)
	// DefaultVerifyMessages is how many messages the --verify pass checks
	// per test (fewer above 1 MiB, never fewer than the QPs; verifyMessages).
	DefaultVerifyMessages = 64
	// largeMessage: bandwidth tests above this size signal every send by
	// default, as perftest does.
	largeMessage = 8 << 10
	// DefaultCacheLine is the cache line address stepping rounds messages
	// up to when sysfs does not give the CPU's coherency line size, bytes
	// (perftest's fallback too; 64 on x86 and most arm64); see
	// cacheline.go.
	DefaultCacheLine = 64
	// DefaultMaxQPs is a server's default --max-qps: every QP one valid test
	// can ask for (MaxQPs measured plus MaxLoadQPs load QPs).
	DefaultMaxQPs = MaxQPs + MaxLoadQPs
)

// WithDefaults fills every zero (or, for Warmup, negative) field of s that
// has a default, for s's op, mode and size. Fields that do not apply to the
// mode must already be cleared (forMode).
func (s Spec) WithDefaults() Spec {
	if s.Duration == 0 && s.Iters == 0 {
		s.Iters = DefaultLatIters
		if s.Mode == result.ModeBW {
			s.Iters = DefaultBWIters
		}
	}
	if s.Mode == result.ModeBW {
		s.TxDepth, s.CQMod = bwDepths(s.TxDepth, s.CQMod, s.Size, DefaultTxDepth)
	}
	if s.RxDepth == 0 {
		s.RxDepth = DefaultRxDepth
	}
	if s.QPTimeout == 0 {
		s.QPTimeout = DefaultQPTimeout
	}
	if s.RetryCount == 0 {
		s.RetryCount = DefaultRetryCount
	}
	if s.RNRRetry == 0 {
		s.RNRRetry = DefaultRNRRetry
	}
	if s.WarmupTime > 0 {
		s.Warmup = 0
	} else if s.Warmup < 0 {
		s.Warmup = defaultWarmup(s)
	}
	if s.Load != nil {
		l := *s.Load
		l.TxDepth, l.CQMod = bwDepths(l.TxDepth, l.CQMod, l.Size, DefaultLoadTxDepth)
		s.Load = &l
	}
	return s.choiceDefaults()
}

// bwDepths returns the tx depth (def when 0) and CQ moderation of a stream
// of size-byte messages: when not given, one signaled send every
// DefaultCQMod (at most the tx depth), or every send above largeMessage.
func bwDepths(tx, cqMod, size, def int) (int, int) {
	if tx == 0 {
		tx = def
	}
	if cqMod == 0 {
		cqMod = min(DefaultCQMod, tx)
		if size > largeMessage {
			cqMod = 1
		}
	}
	return tx, cqMod
}

// defaultWarmup is the tx depth for bandwidth tests, and 1 % of the
// iterations (at least DefaultLatWarmup) for latency tests.
func defaultWarmup(s Spec) int64 {
	if s.Mode == result.ModeBW {
		return int64(max(s.TxDepth, 0)) // a bad depth is refused by name (Validate)
	}
	return max(s.Iters/100, DefaultLatWarmup)
}

// defaultOps are the operations of a plan that names none: what the QP
// type carries.
func defaultOps(qpType string) []string {
	if !contains(result.QPTypes, qpType) {
		qpType = result.QPTypeRC // "" or unknown (Validate refuses it by name)
	}
	return opNames(func(t OpTraits) bool { return t.Default && t.Carries(qpType) })
}

// defaultSize is the message size of a mode when the plan names none.
func defaultSize(mode string) int {
	if mode == result.ModeBW {
		return DefaultBWSize
	}
	return DefaultLatSize
}
