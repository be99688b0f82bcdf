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
	decode := func(sp *verbs.Spread, raddr []uint64, rkey []uint32) []pick {
		out := make([]pick, len(raddr))
		for i := range raddr {
			m := int(rkey[i]) - 100
			out[i] = pick{m, raddr[i] - sp.Targets[m].Addr}
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
			raddr, rkey, sge, err := verbs.PeekSpread(c.op, c.size, &c.sp, 1, 1, len(c.want))
			if err != nil {
				t.Fatal(err)
			}
			got := decode(&c.sp, raddr, rkey)
			for i, w := range c.want {
				if got[i] != w {
					t.Errorf("work request %d: MR %d offset %d, want MR %d offset %d", i, got[i].mr, got[i].off, w.mr, w.off)
				}
				if want := uint32(c.size); sge[i] != want {
					t.Errorf("work request %d carries %d bytes, want %d", i, sge[i], want)
				}
			}
		})
	}

	t.Run("random", func(t *testing.T) {
		const n, mrs, slots, size = 20000, 4, 64, 4096
		sp := verbs.Spread{Targets: targets(mrs, slots*size), Access: verbs.SpreadRandom, Step: size, Slots: slots, Seed: 42}
		raddr, rkey, _, err := verbs.PeekSpread(verbs.OpRead, size, &sp, 1, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[pick]int{}
		for _, p := range decode(&sp, raddr, rkey) {
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
		again, _, _, _ := verbs.PeekSpread(verbs.OpRead, size, &sp, 1, 1, n)
		other := sp
		other.Seed = 43
		diff, _, _, _ := verbs.PeekSpread(verbs.OpRead, size, &other, 1, 1, n)
		same, differs := true, false
		for i := range raddr {
			same = same && again[i] == raddr[i]
			differs = differs || diff[i] != raddr[i]
		}
		if !same || !differs {
			t.Errorf("seed 42 twice the same: %v; seed 43 differs: %v", same, differs)
		}
	})

	t.Run("sge", func(t *testing.T) {
		for _, c := range []struct{ size, sge int }{{4096, 2}, {4097, 4}, {3, 3}} {
			_, _, got, err := verbs.PeekSpread(verbs.OpSend, c.size, nil, c.sge, 4, 8)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range got {
				if int(b) != c.size {
					t.Errorf("size %d over %d SGEs: work request %d carries %d bytes", c.size, c.sge, i, b)
				}
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
			if _, _, _, err := verbs.PeekSpread(verbs.OpWrite, c.size, c.sp, c.sge, 1, 1); err == nil {
				t.Errorf("%s: accepted", c.name)
			}
		}
	})
}
