//go:build cgo && linux

package verbs

import (
	"errors"
	"sync/atomic"
)

// LatLoop is a latency loop run in batches: an Engine, or a wrapper of one
// (the ping-pong's wait-first side).
type LatLoop interface {
	Capacity() int
	ResetSamples()
	LatClient(n int) error
	Samples() []uint64
}

// CutLoop is a LatLoop whose batch cut by Abort after TimeUp ends without
// an error, its completed samples kept: a -D ping-pong facing a peer that
// stopped first (perftest's sides stop each on its own clock, and
// the one that stops first sends nothing more).
type CutLoop struct {
	LatLoop
	timeUp atomic.Bool
	// Cut: a batch was cut; Idle is how long it waited after its last
	// round trip (ns): from its start plus its samples to its return.
	Cut  bool
	Idle int64
}

// TimeUp makes the next ErrAborted the loop's end; call it before Abort
// (from any goroutine).
func (c *CutLoop) TimeUp() { c.timeUp.Store(true) }

// LatClient runs the batch; a cut one returns nil.
func (c *CutLoop) LatClient(n int) error {
	t0 := Now()
	err := c.LatLoop.LatClient(n)
	if err != nil && errors.Is(err, ErrAborted) && c.timeUp.Load() {
		c.Cut = true
		var done int64
		for _, v := range c.Samples() {
			done += int64(v)
		}
		c.Idle = max(Now()-t0-done, 0)
		return nil
	}
	return err
}
