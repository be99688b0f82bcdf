package spec

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// validateSRQ refuses --srq where no QP consumes receives or where it is
// not supported.
func (s Spec) validateSRQ() error {
	if !s.SRQ {
		return nil
	}
	switch {
	case s.Transport == result.TransportTCP:
		return fmt.Errorf("--srq applies to RDMA tests, not to the TCP baseline")
	case !s.Traits().ConsumesRecv:
		return fmt.Errorf("--srq applies to send tests: only a SEND consumes receives (op %s): use --op send", s.Op)
	case s.QPTypeOrDefault() == result.QPTypeUC:
		return fmt.Errorf("--srq is not supported on UC QPs: use --qp-type rc or ud")
	}
	return nil
}
