package spec

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The load's attacker knobs (rdmabench isolation, bench/isolation): mixed
// message sizes on the load QPs (AltSize), SENDs at a receiver that keeps
// only one receive posted per QP (RNR: receiver-not-ready NAKs, retried
// forever by the default rnr_retry 7), memory registration churn
// beside the QPs (ChurnSize), and the MTT/MPT thrash (MRs): the load
// QPs' operations spread round robin over many small MRs on both sides,
// the target's registered with the load op's remote access only
// (bench/spread; the keys travel in proto.QPInfo.LoadRegion).

// MaxChurnSize bounds Load.ChurnSize, bytes.
const MaxChurnSize = 64 << 20

// MaxLoadMRs bounds Load.MRs: the target's keys travel in one control
// message (proto.MaxPayload, 1 MiB; about 60 bytes a key); the device's
// max_mr bounds it further.
const MaxLoadMRs = 8192

// validateAttack checks the attacker knobs of l.
func (l *Load) validateAttack() error {
	switch {
	case l.AltSize < 0 || l.AltSize > MaxSize:
		return fmt.Errorf("load alternate size %d bytes out of range 0..%d", l.AltSize, MaxSize)
	case l.AltSize > 0 && l.QPs < 2:
		return fmt.Errorf("load alternate size %d bytes needs at least 2 load QPs (the odd ones use it), not %d", l.AltSize, l.QPs)
	case l.RNR && l.Op != result.OpSend:
		return fmt.Errorf("load RNR storm sends: op %q invalid, want send", l.Op)
	case l.RNR && l.QPs < 1:
		return fmt.Errorf("load RNR storm needs at least 1 load QP, not %d", l.QPs)
	case l.Threads < 0 || l.Threads > max(l.QPs, 1):
		return fmt.Errorf("load threads %d out of range 0..%d (the load QPs)", l.Threads, max(l.QPs, 1))
	case l.ChurnSize < 0 || l.ChurnSize > MaxChurnSize:
		return fmt.Errorf("load registration churn size %d bytes out of range 0..%d", l.ChurnSize, MaxChurnSize)
	case l.MRs < 0 || l.MRs > MaxLoadMRs:
		return fmt.Errorf("load MRs %d out of range 0..%d (the target's keys travel in one control message)", l.MRs, MaxLoadMRs)
	case l.MRs > 1 && l.QPs < 1:
		return fmt.Errorf("load MRs %d need at least 1 load QP to spread over them, not %d", l.MRs, l.QPs)
	case l.MRs > 1 && (l.RNR || l.AltSize > 0):
		return fmt.Errorf("load MRs %d with an RNR storm or an alternate size is not supported: one message size, remote targets", l.MRs)
	}
	return nil
}

// LoadSpreads reports whether the load QPs spread over several MRs
// (Load.MRs above 1).
func (s Spec) LoadSpreads() bool { return s.Load != nil && s.Load.MRs > 1 }

// Spreads reports whether the measured or the load QPs spread (Spread,
// LoadSpreads): the test registers spread memory.
func (s Spec) Spreads() bool { return s.Spread() || s.LoadSpreads() }

// checkDeviceLoadMRs refuses load MRs above the device's max_mr, the
// measured QPs' spread MRs and the test's pool MRs (measured and load)
// counted.
func (s Spec) checkDeviceLoadMRs(d DeviceLimits) error {
	if !s.LoadSpreads() || d.MaxMR <= 0 {
		return nil
	}
	spread := 0
	if s.Spread() {
		spread = s.NumMRs()
	}
	if n := s.Load.MRs + spread + 2; n > d.MaxMR {
		return fmt.Errorf("load MRs %d (plus %d spread and 2 pool MRs: %d) is above %s's max_mr %d: %w", s.Load.MRs, spread, n, d.Name, d.MaxMR, ErrNotSupported)
	}
	return nil
}

// LoadSpecAt is the bandwidth spec of load QP i: LoadSpec with the QP's
// own message size (AltSize on odd i).
func (s Spec) LoadSpecAt(i int) Spec {
	l := s.LoadSpec()
	l.Size = s.Load.SizeAt(i)
	return l
}

// SizeAt is the message size of load QP i in bytes.
func (l *Load) SizeAt(i int) int {
	if l.AltSize > 0 && i%2 == 1 {
		return l.AltSize
	}
	return l.Size
}
