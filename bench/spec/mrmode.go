package spec

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// MRModeOrDefault is the spec's registration mode, "pool" when unset.
func (s Spec) MRModeOrDefault() string {
	if s.MRMode == "" {
		return result.MRModePool
	}
	return s.MRMode
}

// MRModeLabel is the registration mode as results show it ("" for the TCP
// baseline, which registers nothing).
func (s Spec) MRModeLabel() string {
	if s.Transport == result.TransportTCP {
		return ""
	}
	return s.MRModeOrDefault()
}

// validateMR checks MRMode and HugePages against the rest of the spec.
func (s Spec) validateMR() error {
	if !contains(result.MRModes, s.MRModeOrDefault()) {
		return fmt.Errorf("MR mode %q unknown; valid: %s", s.MRMode, strings.Join(result.MRModes, ", "))
	}
	if s.Transport == result.TransportTCP {
		if s.MRModeOrDefault() != result.MRModePool {
			return fmt.Errorf("--mr-mode %s applies to RDMA tests, not to the TCP baseline", s.MRMode)
		}
		if s.HugePages {
			return fmt.Errorf("--hugepages applies to RDMA buffers, not to the TCP baseline")
		}
	}
	if s.MRModeOrDefault() == result.MRModePerOp && s.Inline > 0 && s.Size <= s.Inline && s.Traits().Inline {
		return fmt.Errorf("--mr-mode per-op with --inline-size %d: %d-byte messages are posted inline, copied by the CPU "+
			"without any registration; use --inline-size 0 (or a size above %d)", s.Inline, s.Size, s.Inline)
	}
	return nil
}

// perOpInterval is TimedInterval with per-operation registration.
func (s Spec) perOpInterval() string {
	const reg = "per-operation registration: the client registers each operation's local buffer (ibv_reg_mr) before its post " +
		"and deregisters it (ibv_dereg_mr) once it is known complete; the server's buffers stay pooled"
	if s.Mode == result.ModeBW {
		return "bandwidth with " + reg + "; bandwidth: first registration to last completion; " +
			"latency: from before the registration to the completion of each signaled work request"
	}
	if t := s.Traits(); t.PerOpInterval != nil {
		return t.PerOpInterval(reg)
	}
	return ""
}
