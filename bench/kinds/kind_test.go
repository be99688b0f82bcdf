package kinds

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestKindOf: each test is one kind, from its Spec alone.
func TestKindOf(t *testing.T) {
	load := &spec.Load{QPs: 1}
	for _, tt := range []struct {
		s    spec.Spec
		want Kind
	}{
		{spec.Spec{Op: result.OpSend, Mode: result.ModeLat}, latKind{}},
		{spec.Spec{Op: result.OpWrite, Mode: result.ModeLat, QPs: 2}, latKind{}},
		{spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Load: load}, loadKind{}},
		{spec.Spec{Op: result.OpWrite, Mode: result.ModeBW}, bwKind{}},
		{spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, QPs: 4}, multiKind{}},
		{spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Bidirectional: true}, bidirKind{}},
		{spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Transport: result.TransportTCP}, tcpKind{}},
		{spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Transport: result.TransportTCP}, tcpKind{}},
	} {
		if got := Of(tt.s); got != tt.want {
			t.Errorf("%s (qps %d, load %v, bidir %v): %T, want %T", tt.s.Name(), tt.s.QPs, tt.s.Load != nil, tt.s.Bidirectional, got, tt.want)
		}
	}
}
