package bench

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestAddrStepCacheLine: the step is the message rounded up to this
// machine's cache line, not a fixed 64 B.
func TestAddrStepCacheLine(t *testing.T) {
	defer func(old int) { spec.CacheLine = old }(spec.CacheLine)
	for _, c := range []struct {
		line, size, want int
	}{
		{64, 65, 128}, {64, 130, 192}, {128, 65, 128}, {128, 130, 256}, {128, 8, 128}, {256, 300, 512},
	} {
		spec.CacheLine = c.line
		s := spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: c.size, AddrCycle: 4096}
		if step, _ := s.AddrStep(); step != c.want {
			t.Errorf("cache line %d, %d B: step %d, want %d", c.line, c.size, step, c.want)
		}
	}
}
