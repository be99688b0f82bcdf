package bench

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var gcSink []byte

// gcChurn allocates n bytes of garbage, 64 KiB at a time.
func gcChurn(n int) {
	for i := 0; i < n>>16; i++ {
		gcSink = make([]byte, 1<<16)
	}
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// TestQuietGC: between quietGC and its restore no GC cycle runs however
// much garbage the process makes (the drop-in's timed loop against
// perftest: a concurrent mark took the CPU from ib_send_bw's loops in the
// one-guest bed), nested calls keep it off until the last restore, and the
// old percentage comes back.
func TestQuietGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	gcChurn(64 << 20)
	r1 := quietGC()
	r2 := quietGC()
	n0 := numGC()
	gcChurn(256 << 20)
	r1()
	r1() // a second call is a no-op
	gcChurn(256 << 20)
	if n := numGC(); n != n0 {
		t.Fatalf("%d GC cycles while quiet", n-n0)
	}
	r2()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("GC percent after the last restore: %d, want 100", p)
	}
	gcChurn(256 << 20)
	if numGC() == n0 {
		t.Fatal("no GC cycle after the restore")
	}
}
