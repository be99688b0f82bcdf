package spread

import (
	"os"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// thrash is a latency test beside the mr-thrash load: 2 QPs of 512 B
// WRITEs over 4096 MRs a side.
func thrash() spec.Spec {
	return spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1,
		Load: &spec.Load{QPs: 2, Op: result.OpWrite, Size: 512, TxDepth: 16, CQMod: 1, MRs: 4096}}
}

// TestLoadBytes: the budget counts a spreading load's MRs on both sides
// (4096 x 512 B each), beside the measured QPs' region.
func TestLoadBytes(t *testing.T) {
	page := int64(os.Getpagesize())
	round := func(n int64) int64 { return (n + page - 1) / page * page }
	s := thrash()
	region := s
	region.Op, region.Mode, region.Size, region.Region = result.OpWrite, result.ModeBW, 4096, 1<<20
	for _, c := range []struct {
		name   string
		s      spec.Spec
		client bool
		want   int64
	}{
		{"target", s, false, round(4096 * 512)},
		{"initiator", s, true, round(4096 * 512)},
		{"region and load, target", region, false, round(1<<20) + round(4096*512)},
		{"no spread", spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2}, false, 0},
	} {
		if got := Bytes(c.s, c.client); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

// TestLoadEngines: the initiator's load QPs spread over the peer's load
// region (one target per MR), its measured QPs not; a peer that sent
// too few keys is refused; the target side spreads nothing.
func TestLoadEngines(t *testing.T) {
	s := thrash()
	peer := proto.QPInfo{}
	for i := range 4096 {
		peer.LoadRegion = append(peer.LoadRegion, proto.MRInfo{Addr: 0x10000 + uint64(i)*512, Len: 512, RKey: uint32(i + 1)})
	}
	var m *Memory // no local buffers: the pool's
	sps, err := m.Engines(s, true, 1, 2, peer)
	if err != nil || len(sps) != 3 || sps[0] != nil {
		t.Fatalf("%d spreads, %v", len(sps), err)
	}
	for i, sp := range sps[1:] {
		if sp == nil || len(sp.Targets) != 4096 || sp.Targets[4095].RKey != 4096 || sp.Slots != 1 || sp.Step != 512 {
			t.Errorf("load QP %d: %+v", i, sp)
		}
	}
	peer.LoadRegion = peer.LoadRegion[:10]
	if _, err := m.Engines(s, true, 1, 2, peer); err == nil || !strings.Contains(err.Error(), "load: peer registered 10 MRs") {
		t.Errorf("short load region: %v", err)
	}
	if sps, err := m.Engines(s, false, 1, 2, peer); err != nil || sps[1] != nil || sps[2] != nil {
		t.Errorf("target side: %v, %v", sps, err)
	}
}
