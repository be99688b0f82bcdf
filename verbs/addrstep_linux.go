//go:build cgo && linux

package verbs

import "fmt"

// checkAddrStep checks the address stepping settings: a step of at least
// one message within the cycle, and local areas (and per-op memory) that
// hold the cycle: the source in [0, AddrCycle), the sink in
// [RecvOffset, RecvOffset+AddrCycle).
func (cfg *EngineConfig) checkAddrStep() error {
	st, cy := cfg.AddrStep, cfg.AddrCycle
	if rs := cfg.RecvStep; rs != 0 {
		recv := cfg.Size
		if cfg.QP != nil && cfg.QP.typ == QPTypeUD {
			recv += GRHSize
		}
		if rs < recv || cy < rs {
			return fmt.Errorf("verbs: receive step %d bytes must be at least the %d-byte receive and at most the %d-byte cycle", rs, recv, cy)
		}
		if st == 0 {
			st = cfg.Size // the cycle's areas are checked below as for a sender's
		}
	}
	if st == 0 && cy == 0 {
		return nil
	}
	local := int64(cfg.MR.Len())
	if cfg.PerOp != nil {
		local = min(local, int64(cfg.PerOp.Buf.Len()))
	}
	switch {
	case st < cfg.Size || cy < st:
		return fmt.Errorf("verbs: address step %d bytes must be at least the %d-byte message and at most the %d-byte cycle", st, cfg.Size, cy)
	case cy > cfg.RecvOffset || int64(cfg.RecvOffset+cy) > local:
		return fmt.Errorf("verbs: address cycle of %d bytes does not fit the engine's areas (receive offset %d, %d-byte MR)", cy, cfg.RecvOffset, local)
	}
	return nil
}
