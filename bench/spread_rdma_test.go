package bench

import (
	"context"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestRDMAWorkloadKnobs runs the workload knobs on a real device in
// loopback: 4 KiB random READ and WRITE over a 64 MiB region (2 QPs, each
// its own seed), seq READ latency over 4 MRs, stride WRITE over 8 MRs with
// 2 SGEs, SEND with 3 SGEs, and fetch-and-add over 64 one-slot MRs; each
// result records its knobs and a message rate.
func TestRDMAWorkloadKnobs(t *testing.T) {
	requireDevice(t)
	bw := []string{result.ModeBW}
	var specs []Spec
	for _, p := range []Plan{
		{Ops: []string{result.OpRead, result.OpWrite}, Modes: bw, Sizes: []int{4096},
			Template: Spec{Iters: 2000, Warmup: -1, QPs: 2, Region: 64 << 20, Access: spec.AccessRandom, Seed: 11}},
		{Ops: []string{result.OpRead}, Modes: []string{result.ModeLat}, Sizes: []int{64},
			Template: Spec{Iters: 200, Warmup: -1, Region: 1 << 20, MRs: 4}},
		{Ops: []string{result.OpWrite}, Modes: bw, Sizes: []int{1024},
			Template: Spec{Iters: 400, Warmup: -1, Region: 1 << 20, MRs: 8, Access: spec.AccessStride, Stride: 3000, SGE: 2}},
		{Ops: []string{result.OpSend}, Modes: bw, Sizes: []int{4096}, Template: Spec{Iters: 400, Warmup: -1, SGE: 3}},
		{Ops: []string{result.OpFetchAdd}, Modes: bw, Template: Spec{Iters: 400, Warmup: -1, MRs: 64}},
	} {
		specs = append(specs, plan(t, p)...)
	}
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, doc, specs)
	for i, r := range doc.Results {
		s, w := specs[i], r.Workload
		if w == nil || w.MRs != s.NumMRs() || w.SGE != s.NumSGE() || w.RegionBytes != s.RegionLen() || w.Access != s.AccessOrDefault() && s.Spread() {
			t.Errorf("%s: workload %+v", s.Name(), w)
			continue
		}
		if s.AccessOrDefault() == spec.AccessRandom && w.Seed != 11 {
			t.Errorf("%s: seed %d, want 11", s.Name(), w.Seed)
		}
		if s.Mode == result.ModeBW && r.Bandwidth.Mpps <= 0 {
			t.Errorf("%s: no message rate: %+v", s.Name(), r.Bandwidth)
		}
		t.Logf("%s: region %d bytes over %d MRs, %s, %d SGEs: %.4f Mpps", s.Name(), w.RegionBytes, w.MRs, w.Access, w.SGE, r.Bandwidth.Mpps)
	}
}
