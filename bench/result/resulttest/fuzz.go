package resulttest

import (
	"runtime/metrics"
	"testing"
)

// FuzzMemoryCeiling is what one input may allocate in a reader's fuzz
// target, in all (the acceptance bound of issue #31: no reader exceeds
// 256 MiB on any input; allocating less in all keeps the peak under it).
const FuzzMemoryCeiling = 256 << 20

// allocated is the bytes the process has allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Bounded runs fn and fails t when fn allocated more than
// FuzzMemoryCeiling: the memory ceiling as a fuzz failure.
func Bounded(t *testing.T, fn func()) {
	t.Helper()
	before := allocated()
	fn()
	if n := allocated() - before; n > FuzzMemoryCeiling {
		t.Fatalf("the reader allocated %d MiB on this input, over the ceiling of %d MiB", n>>20, FuzzMemoryCeiling>>20)
	}
}

// Seed adds the real documents of every kind and the hostile corpus to
// f's corpus.
func Seed(f *testing.F) {
	for _, b := range RealFiles(f) {
		f.Add(b)
	}
	for _, h := range HostileDocuments(f) {
		f.Add(h.Data)
	}
}
