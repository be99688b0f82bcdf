package report

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestNUMALine(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  result.Env
		want string
	}{
		{"nil", result.Env{EnginePinnedCPU: -1}, ""},
		{"none", result.Env{EnginePinnedCPU: -1, NUMA: &result.NUMAPlacement{Node: -1, Source: result.NUMASourceNone, Reason: "rxe0 has no NUMA node"}},
			"none (rxe0 has no NUMA node)"},
		{"flag", result.Env{EnginePinnedCPU: -1, NUMA: &result.NUMAPlacement{Node: 1, Source: result.NUMASourceFlag, Reason: "--numa-node", CPUs: "2-3", MemoryBound: true}},
			"node 1 (--numa-node), engine on CPUs 2-3, buffers bound"},
		{"one CPU", result.Env{EnginePinnedCPU: -1, NUMA: &result.NUMAPlacement{Node: 1, Source: result.NUMASourceFlag, Reason: "--numa-node", CPUs: "1", MemoryBound: true}},
			"node 1 (--numa-node), engine on CPU 1, buffers bound"},
		{"cpu wins", result.Env{EnginePinnedCPU: 5, NUMA: &result.NUMAPlacement{Node: 0, Source: result.NUMASourceDevice, Reason: "mlx5_0's NUMA node", CPUs: "0-7", MemoryBound: true}},
			"node 0 (mlx5_0's NUMA node), engine on CPU 5 (--cpu), buffers bound"},
	} {
		if got := NUMALine(&tc.env); got != tc.want {
			t.Errorf("%s: NUMALine = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestHeaderNUMA(t *testing.T) {
	doc := &result.Document{Env: result.Env{Device: "rxe0", EnginePinnedCPU: -1,
		NUMA: &result.NUMAPlacement{Node: -1, Source: result.NUMASourceNone, Reason: "rxe0 has no NUMA node"}}}
	var b strings.Builder
	if err := WriteHeader(&b, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " NUMA            : none (rxe0 has no NUMA node)\n") {
		t.Errorf("header lacks the NUMA line:\n%s", b.String())
	}
}
