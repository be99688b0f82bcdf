package verbs

/*
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"
)

// Ring mode: a bandwidth sender's samples drained while it runs.
//
// In ring mode the sample buffer is a ring that another goroutine drains
// (RingWritten, RingSamples, RingRelease) while BWClient keeps posting on
// the engine's thread, so the send queue never empties while Go records a
// full buffer: BWClient returns full only when the drainer has fallen a
// whole buffer behind. Every method but BWClient may be called from the
// draining goroutine while BWClient runs; Close only after it stopped.

// SetRing turns ring mode on or off and empties the samples. The capacity
// must be a power of two for ring mode. Call it only while no loop runs.
func (g *Engine) SetRing(on bool) error {
	c := uint64(g.e.cap)
	if on && c&(c-1) != 0 {
		return fmt.Errorf("verbs: ring mode needs a power-of-two sample buffer, not %d", c)
	}
	g.e.ring = 0
	if on {
		g.e.ring = 1
	}
	g.e.nsamples, g.e.ring_read = 0, 0
	return nil
}

// RingWritten counts the samples written since SetRing (atomic: safe while
// BWClient runs).
func (g *Engine) RingWritten() uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&g.e.nsamples)))
}

// RingSamples is a view, in C memory, of samples from up to to (counts as
// RingWritten gives them): the longest run that does not wrap, so it may
// end before to. from must not be behind the last RingRelease and to not
// beyond RingWritten. Valid until RingRelease passes it.
func (g *Engine) RingSamples(from, to uint64) []uint64 {
	c := uint64(g.e.cap)
	i := from & (c - 1)
	n := min(to-from, c-i)
	return unsafe.Slice((*uint64)(unsafe.Add(unsafe.Pointer(g.e.samples), i*8)), int(n))
}

// RingRelease hands the slots of samples before to back to the loop.
func (g *Engine) RingRelease(to uint64) {
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&g.e.ring_read)), to)
}

// RingRoom is how many samples the ring can take before BWClient must
// return full.
func (g *Engine) RingRoom() uint64 {
	return uint64(g.e.cap) - (g.RingWritten() - atomic.LoadUint64((*uint64)(unsafe.Pointer(&g.e.ring_read))))
}

// CompletedNow is Completed read atomically, for another goroutine while
// BWClient runs (a progress line).
func (g *Engine) CompletedNow() uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&g.e.completed)))
}

// Pauses reports a bandwidth sender's posting pauses since ResetCounters:
// how many times BWClient returned because the sample buffer was full, and
// the longest time from one BWClient return to the next call while the
// target was not complete (the send queue drains meanwhile).
func (g *Engine) Pauses() (full uint64, longest time.Duration) {
	return uint64(g.e.full_returns), time.Duration(g.e.max_pause_ns)
}
