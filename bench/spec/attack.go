package spec

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The load's attacker knobs (rdmabench isolation, bench/isolation): mixed
// message sizes on the load QPs (AltSize), SENDs at a receiver that keeps
// only one receive posted per QP (RNR: receiver-not-ready NAKs, retried
// forever by the default rnr_retry 7), and memory registration churn
// beside the QPs (ChurnSize).

// MaxChurnSize bounds Load.ChurnSize, bytes.
const MaxChurnSize = 64 << 20

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
