package verbs

// #include "engine.h"
import "C"

import "fmt"

// The engine's perftest mode: the drop-in facing a real perftest tool
// (bench/dropin/peer/peer.go, docs/perftest.md).

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

// SetPerftestInterval makes LatClient (SEND, WRITE) time perftest's interval:
// post to post, the repost inside, none for the first since ResetReply.
func (g *Engine) SetPerftestInterval() { g.e.pt_interval = 1 }

// ResetReply forgets the previous post (LatReply, perftest's interval).
func (g *Engine) ResetReply() { g.e.pt_prev = 0 }

// SetPerftestSize makes n bytes the message size of the next loops, for
// perftest's -a (every size on the same QPs and memory): n is at most the
// size the engine was created with, which its receives keep taking (a
// message of any size of the run fits the receives already posted).
// inline posts the messages inline. The iteration count and the
// ping-pong's previous post start again, as each of perftest's sizes
// counts from 1. Call it only while no loop runs.
func (g *Engine) SetPerftestSize(n int, inline bool) error {
	if n < 1 || n > g.cfg.Size {
		return fmt.Errorf("verbs: message size %d out of range 1..%d (the engine's)", n, g.cfg.Size)
	}
	g.e.recv_len = C.uint32_t(g.cfg.Size)
	g.e.size = C.uint32_t(n)
	g.e.send_flags = 0
	if inline {
		g.e.send_flags = C.IBV_SEND_INLINE
	}
	g.e.iter, g.e.pt_prev = 0, 0
	g.e.wr_ready = 0 // the prebuilt work requests carry the size and flags
	return nil
}
