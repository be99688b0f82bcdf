package bench

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// quietGC collects the garbage of the drop-in's setup (the environment,
// the exchange, the endpoints: megabytes) now, before the barrier after
// RTR, and turns the collector off until the returned restore: a cycle
// that the setup's garbage started, or one that the drainer's allocations
// start, would otherwise run its mark workers during the timed loop on a
// CPU that the peer's loop or the device's kernel work needs (perftest, in
// C, has no collector). Under emulation with two CPUs (the one-guest bed)
// a 15 ms concurrent mark landed in a 170 ms ib_send_bw client window.
// Calls nest (both sides of a test in one process): the collector comes
// back, at its old percentage, with the last restore. Call restore once
// the loop is done.
func quietGC() (restore func()) {
	runtime.GC() // a full, blocking cycle: no mark or sweep work left behind
	gcQuiet.Lock()
	if gcQuiet.n == 0 {
		gcQuiet.old = debug.SetGCPercent(-1)
	}
	gcQuiet.n++
	gcQuiet.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			gcQuiet.Lock()
			defer gcQuiet.Unlock()
			if gcQuiet.n--; gcQuiet.n == 0 {
				debug.SetGCPercent(gcQuiet.old)
			}
		})
	}
}

var gcQuiet struct {
	sync.Mutex
	n   int // quietGC calls not restored
	old int // the GC percentage before the first
}

// perftestLoopHook, when set (tests), is called on a side as its loop
// part starts (after the barrier after RTR).
var perftestLoopHook func(client bool)
