// Package testhook holds the switches by which the module's tests plant a
// fault in the code under them, or watch what it does: read by that code,
// set only by tests, and (internal) no part of the public API.
package testhook

import "sync/atomic"

// VerifyCorrupt, when >= 0, flips the byte at that offset of every message
// the checking side of a --verify pass received, right before its check
// (bench/kinds): a planted corruption the check must catch.
var VerifyCorrupt = -1

// VerifyCorruptImm, when set, flips the low bit of every immediate the
// server's --verify check sees (bench/kinds).
var VerifyCorruptImm bool

// SampleCap, when > 0, is the C sample buffer size per engine, entries (a
// power of two), instead of bench/endpoint's: a test crosses a buffer
// boundary in few operations.
var SampleCap int

// ResponderThreads are the server's responder loop threads (bench/kinds;
// tests read the peak: a multi-QP test's receivers share one thread).
var ResponderThreads ThreadGauge

// ThreadGauge counts the threads running a loop, and their peak.
type ThreadGauge struct{ now, peak atomic.Int64 }

// Enter counts one thread until the returned function is called.
func (g *ThreadGauge) Enter() func() {
	n := g.now.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return func() { g.now.Add(-1) }
}

// Peak is the most threads that ran at once since the last ResetPeak.
func (g *ThreadGauge) Peak() int64 { return g.peak.Load() }

// ResetPeak starts a new peak.
func (g *ThreadGauge) ResetPeak() { g.peak.Store(0) }
