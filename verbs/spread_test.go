package verbs_test

import (
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// TestSpreadPicks checks the C loop's choice of each work request's
// target (spread_wr, through PeekSpread, posting nothing): seq walks each
// MR a message at a time with the MRs round robin, stride:N moves N bytes
// and wraps, random stays inside the MRs on message-aligned offsets,
// reaches every slot, and repeats with its seed; SGEs carry the message.
func TestSpreadPicks(t *testing.T) {
	targets := func(n int, each uint64) []verbs.RemoteMR {
		var ts []verbs.RemoteMR
		for i := 0; i < n; i++ {
			ts = append(ts, verbs.RemoteMR{Addr: 1<<32 + uint64(i)*each, Len: each, RKey: uint32(100 + i)})
		}
		return ts
	}
	type pick struct {
		mr  int
		off uint64
	}
	decode := func(sp *verbs.Spread, ps []verbs.Peek) []pick {
		out := make([]pick, len(ps))
		for i, p := range ps {
			m := int(p.RKey) - 100
			out[i] = pick{m, p.RAddr - sp.Targets[m].Addr}
		}
		return out
	}
	for _, c := range []struct {
		name string
		op   verbs.Opcode
		size int
		sp   verbs.Spread
		want []pick // the first picks
	}{
		{"seq one MR", verbs.OpWrite, 4096, verbs.Spread{Targets: targets(1, 16384), Access: verbs.SpreadSeq, Step: 4096, Slots: 4},
			[]pick{{0, 0}, {0, 4096}, {0, 8192}, {0, 12288}, {0, 0}}},
		{"seq three MRs", verbs.OpRead, 64, verbs.Spread{Targets: targets(3, 128), Access: verbs.SpreadSeq, Step: 64, Slots: 2},
			[]pick{{0, 0}, {1, 0}, {2, 0}, {0, 64}, {1, 64}, {2, 64}, {0, 0}}},
		{"stride", verbs.OpWrite, 64, verbs.Spread{Targets: targets(1, 1<<20), Access: verbs.SpreadStride, Step: 300000, Slots: 4},
			[]pick{{0, 0}, {0, 300000}, {0, 600000}, {0, 900000}, {0, 0}}},
		{"atomics seq", verbs.OpFetchAdd, 8, verbs.Spread{Targets: targets(2, 16), Access: verbs.SpreadSeq, Step: 8, Slots: 2},
			[]pick{{0, 0}, {1, 0}, {0, 8}, {1, 8}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := verbs.PeekSpread(c.op, c.size, &c.sp, 1, 1, len(c.want))
			if err != nil {
				t.Fatal(err)
			}
			got := decode(&c.sp, ps)
			for i, w := range c.want {
				if got[i] != w {
					t.Errorf("work request %d: MR %d offset %d, want MR %d offset %d", i, got[i].mr, got[i].off, w.mr, w.off)
				}
				if want := uint32(c.size); ps[i].SGEBytes != want {
					t.Errorf("work request %d carries %d bytes, want %d", i, ps[i].SGEBytes, want)
				}
			}
		})
	}

	t.Run("random", func(t *testing.T) {
		const n, mrs, slots, size = 20000, 4, 64, 4096
		sp := verbs.Spread{Targets: targets(mrs, slots*size), Access: verbs.SpreadRandom, Step: size, Slots: slots, Seed: 42}
		ps, err := verbs.PeekSpread(verbs.OpRead, size, &sp, 1, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[pick]int{}
		for _, p := range decode(&sp, ps) {
			if p.mr < 0 || p.mr >= mrs || p.off%size != 0 || p.off/size >= slots {
				t.Fatalf("pick MR %d offset %d outside %d MRs of %d %d-byte slots", p.mr, p.off, mrs, slots, size)
			}
			seen[p]++
		}
		if len(seen) != mrs*slots {
			t.Errorf("%d draws reached %d of the %d slots", n, len(seen), mrs*slots)
		}
		for p, k := range seen { // each slot expects n/256 = 78: far from 0 and from twice that
			if k < 30 || k > 150 {
				t.Errorf("slot %+v drawn %d times of %d: not uniform", p, k, n)
			}
		}
		again, _ := verbs.PeekSpread(verbs.OpRead, size, &sp, 1, 1, n)
		other := sp
		other.Seed = 43
		diff, _ := verbs.PeekSpread(verbs.OpRead, size, &other, 1, 1, n)
		same, differs := len(again) == n && len(diff) == n, false
		for i := range ps {
			same = same && again[i] == ps[i]
			differs = differs || diff[i] != ps[i]
		}
		if !same || !differs {
			t.Errorf("seed 42 twice the same: %v; seed 43 differs: %v", same, differs)
		}
	})

	t.Run("sge", func(t *testing.T) {
		for _, c := range []struct{ size, sge int }{{4096, 2}, {4097, 4}, {3, 3}} {
			ps, err := verbs.PeekSpread(verbs.OpSend, c.size, nil, c.sge, 4, 8)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				if int(p.SGEBytes) != c.size {
					t.Errorf("size %d over %d SGEs: work request %d carries %d bytes", c.size, c.sge, i, p.SGEBytes)
				}
			}
		}
	})

	t.Run("send over local buffers", func(t *testing.T) {
		var locals []verbs.Memory
		for i := 0; i < 3; i++ {
			locals = append(locals, fakeMem{addr: 1 << 20 * uint64(i+1), key: uint32(200 + i)})
		}
		sp := verbs.Spread{Locals: locals, Access: verbs.SpreadSeq, Step: 1, Slots: 1}
		ps, err := verbs.PeekSpread(verbs.OpSend, 64, &sp, 1, 1, 7)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			if want := uint32(200 + i%3); p.LKey != want || p.RAddr != 0 || p.RKey != 0 {
				t.Errorf("SEND %d: lkey %d, remote 0x%x/%d; want lkey %d and no remote address", i, p.LKey, p.RAddr, p.RKey, want)
			}
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, c := range []struct {
			name string
			size int
			sp   *verbs.Spread
			sge  int
		}{
			{"slots past the MR", 4096, &verbs.Spread{Targets: targets(1, 8192), Access: verbs.SpreadSeq, Step: 4096, Slots: 3}, 1},
			{"no targets", 64, &verbs.Spread{Access: verbs.SpreadSeq, Step: 64, Slots: 1}, 1},
			{"locals short", 64, &verbs.Spread{Targets: targets(2, 64), Locals: []verbs.Memory{nil}, Access: verbs.SpreadSeq, Step: 64, Slots: 1}, 1},
			{"more SGEs than bytes", 2, nil, 3},
			{"too many SGEs", 4096, nil, verbs.MaxSGE + 1},
		} {
			if _, err := verbs.PeekSpread(verbs.OpWrite, c.size, c.sp, c.sge, 1, 1); err == nil {
				t.Errorf("%s: accepted", c.name)
			}
		}
	})
}

// fakeMem is a local buffer's address and key as an engine keeps them
// (PeekSpread registers nothing).
type fakeMem struct {
	addr uint64
	key  uint32
}

func (m fakeMem) Addr() uint64 { return m.addr }
func (m fakeMem) Len() uint64  { return 4096 }
func (m fakeMem) LKey() uint32 { return m.key }
