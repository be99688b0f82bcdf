package bench

import (
	"context"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestRDMAWorkloadKnobs runs the workload knobs on a real device in
// loopback, in one brief test (make test runs it): 4 KiB random READ over
// a 16 MiB region in 4 MRs on 2 QPs (each its own seed), 2 SGEs, beside 8
// idle QPs; the result records the knobs and a message rate. The 1 GiB
// region and WRITE run in make cliffs-test; the offsets themselves are
// checked in verbs (TestRDMAEngineSpread, TestSpreadPicks).
func TestRDMAWorkloadKnobs(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpRead}, Modes: []string{result.ModeBW}, Sizes: []int{4096},
		Template: spec.Spec{Iters: 200, Warmup: -1, QPs: 2, Region: 16 << 20, MRs: 4, Access: spec.AccessRandom, Seed: 11, SGE: 2, IdleQPs: 8}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, doc, specs)
	for i, r := range doc.Results {
		s, w := specs[i], r.Workload
		if w == nil || w.IdleQPs != s.IdleQPs || w.MRs != s.NumMRs() || w.SGE != s.NumSGE() || w.RegionBytes != s.RegionLen() || w.Access != s.AccessOrDefault() && s.Spread() {
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

// TestRDMALoadMRThrash: a load that spreads over MRs (mr-thrash) runs in
// loopback and against a server beside a SEND latency victim: the target
// registers 128 MRs for the load, their keys reach the initiator, and
// the load's result records the MRs and its operations.
func TestRDMALoadMRThrash(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Sizes: []int{2},
		Template: spec.Spec{Iters: 200, Warmup: -1, Load: &spec.Load{QPs: 2, Op: result.OpWrite, Size: 512, TxDepth: 16, CQMod: 1, MRs: 128}}})
	loop, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	remote, err := RunClient(context.Background(), startServer(t), runCfg(specs))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(checkDoc(t, loop, specs).Results, checkDoc(t, remote, specs).Results...) {
		if r.Load == nil || r.Load.MRs != 128 || r.Load.QPs != 2 || r.Load.Ops == 0 {
			t.Fatalf("load %+v", r.Load)
		}
		t.Logf("send lat beside 2 QPs over 128 MRs (make isolation-test runs 4096): p50 %.2f us; load %d ops, %.4f Mpps", r.Latency.P50.NS/1e3, r.Load.Ops, r.Load.Bandwidth.Mpps)
	}
}
