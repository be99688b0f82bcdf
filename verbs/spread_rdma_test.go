package verbs_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAEngineSpread checks spreading on a real device from the memory
// it touched: fetch-and-adds spread seq over 3 target MRs of 8 slots
// leave n/24 in every counter; spread random they leave n in all, every
// counter reached; WRITEs from 3 local buffers (Locals) leave each target
// MR's slots with its own local buffer's bytes.
func TestRDMAEngineSpread(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const mrs, slots, each = 3, 8, 4096
	for _, tt := range []struct {
		name   string
		op     verbs.Opcode
		size   int
		access verbs.SpreadAccess
	}{
		{"fetch_add seq", verbs.OpFetchAdd, 8, verbs.SpreadSeq},
		{"fetch_add random", verbs.OpFetchAdd, 8, verbs.SpreadRandom},
		{"write seq with local MRs", verbs.OpWrite, 64, verbs.SpreadSeq},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * mrs * each,
				Access: verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteAtomic, Depth: 32})
			clear(b.Buf.Bytes())
			sp := &verbs.Spread{Access: tt.access, Step: uint64(tt.size), Slots: slots, Seed: 5}
			for i := 0; i < mrs; i++ {
				mr, err := b.PD.RegisterMR(b.Buf, i*each, each, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteAtomic)
				if err != nil {
					t.Fatal(err)
				}
				defer mr.Close()
				sp.Targets = append(sp.Targets, verbs.RemoteMR{Addr: mr.Addr(), Len: mr.Len(), RKey: mr.RKey()})
			}
			if tt.op == verbs.OpWrite {
				src := a.Buf.Bytes()
				for i := 0; i < mrs; i++ {
					for j := range tt.size {
						src[mrs*each+i*each+j] = byte(i + 1) // local buffer i holds i+1
					}
					mr, err := a.PD.RegisterMR(a.Buf, mrs*each+i*each, each, verbs.AccessLocalWrite)
					if err != nil {
						t.Fatal(err)
					}
					defer mr.Close()
					sp.Locals = append(sp.Locals, mr)
				}
			}
			n := uint64(mrs * slots * 40)
			streamN(t, verbs.EngineConfig{QP: a.QP, MR: a.MR, Op: tt.op, Size: tt.size, RecvOffset: each,
				RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), TxDepth: 16, CQMod: 4, RxDepth: 1,
				Timeout: 5 * time.Second, Samples: int(n), Spread: sp}, n)
			dst := b.Buf.Bytes()
			var total uint64
			for m := 0; m < mrs; m++ {
				for j := 0; j < slots; j++ {
					slot := dst[m*each+j*tt.size : m*each+(j+1)*tt.size]
					switch {
					case tt.op == verbs.OpWrite:
						for _, c := range slot {
							if c != byte(m+1) {
								t.Fatalf("MR %d slot %d holds %v, want local buffer %d's bytes %d", m, j, slot, m, m+1)
							}
						}
					default:
						c := binary.LittleEndian.Uint64(slot)
						total += c
						if tt.access == verbs.SpreadSeq && c != n/(mrs*slots) {
							t.Errorf("MR %d slot %d: counter %d, want %d", m, j, c, n/(mrs*slots))
						}
						if c == 0 {
							t.Errorf("MR %d slot %d never reached in %d operations", m, j, n)
						}
					}
				}
			}
			if tt.op == verbs.OpFetchAdd && total != n {
				t.Errorf("counters sum to %d, want %d operations", total, n)
			}
		})
	}
}
