package verbs

// #include "engine.h"
import "C"

import "fmt"

// The engine's perftest mode: the drop-in facing a real perftest tool
// (bench/perftestpeer.go, docs/perftest.md).

// SetPerftestMarker makes the WRITE ping-pong's marker perftest's: the
// iteration count modulo 256 (1, 2, ... 255, 0, 1, ...), which perftest's
// ib_write_lat expects in the last byte of each message. Call it before
// the first iteration.
func (g *Engine) SetPerftestMarker() { g.e.pt_marker = 1 }

// LatReply runs n ping-pong iterations that wait for the peer first, then
// reply (SEND or WRITE), and appends one sample per post after the first
// since ResetReply: the time from the previous post to this one (ns), one
// round trip as perftest times it.
func (g *Engine) LatReply(n int) error {
	if n <= 0 {
		return nil
	}
	switch g.cfg.Op {
	case OpSend, OpWrite:
	default:
		return fmt.Errorf("verbs: %s has no reply loop: the peer's CPU takes no part", g.cfg.Op)
	}
	return g.err(C.rb_pt_lat_reply(g.e, C.uint64_t(n)), "latency reply loop")
}

// ResetReply forgets LatReply's previous post (a new run).
func (g *Engine) ResetReply() { g.e.pt_prev = 0 }
