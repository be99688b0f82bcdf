package spec

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestCheckBoundsCoverSpec: every value a test can be given passes the
// readers' check (result.Check's bounds lie at or beyond the spec's
// limits), so that no document rdmabench writes is refused on reading.
func TestCheckBoundsCoverSpec(t *testing.T) {
	for _, c := range []struct {
		name        string
		spec, check int64
	}{
		{"size", MaxSize, result.MaxSizeBytes},
		{"iterations", MaxIters, result.MaxIterations},
		{"duration", int64(MaxDuration), result.MaxDurationNS},
		{"QPs", MaxQPs + MaxThrashLoadQPs, result.MaxQPCount},
		{"repeat", MaxRepeat, result.MaxRuns},
		{"depth", MaxDepth, result.MaxDepth},
		{"inline", MaxInline, result.MaxDepth},
		{"post list", MaxPostList, result.MaxDepth},
		{"outstanding reads", MaxOutstandingReads, result.MaxDepth},
	} {
		if c.spec > c.check {
			t.Errorf("%s: the spec allows %d, the readers' check only %d", c.name, c.spec, c.check)
		}
	}
}
