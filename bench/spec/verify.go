package spec

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// validateVerify refuses --verify where it checks nothing.
func (s Spec) validateVerify() error {
	if !s.Verify {
		return nil
	}
	switch {
	case s.Transport == result.TransportTCP:
		return fmt.Errorf("--verify checks RDMA payloads, not the TCP baseline (TCP checksums its own data)")
	case s.Traits().Verifier == "":
		return fmt.Errorf("--verify checks the payloads of %s; %s carries an 8-byte operand, not a payload: run atomics without --verify",
			andList(opNames(func(t OpTraits) bool { return t.Verifier != "" })), s.Op)
	}
	return nil
}
