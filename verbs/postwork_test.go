package verbs_test

import (
	"fmt"
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// The bandwidth loop's prebuilt work requests (engine.c's wr_next) post
// exactly what a build from scratch gives, for every operation, with and
// without address stepping, post lists and CQ moderation; signaling is
// every CQMod-th since the start and the last of each run.
func TestPostWorkMatchesBuild(t *testing.T) {
	ops := []verbs.Opcode{verbs.OpSend, verbs.OpSendWithImm, verbs.OpWrite, verbs.OpWriteWithImm, verbs.OpRead, verbs.OpFetchAdd, verbs.OpCmpSwap}
	for _, op := range ops {
		for _, step := range []int{0, 64} {
			for _, pl := range []int{1, 3, 16} {
				for _, mod := range []int{1, 7, 100} {
					name := fmt.Sprintf("%s/step%d/pl%d/mod%d", op, step, pl, mod)
					cfg := verbs.EngineConfig{Op: op, Size: 64, RecvOffset: 4096, RemoteAddr: 0x900000,
						RKey: 9, TxDepth: 128, CQMod: mod, PostList: pl, Imm: 0xffffff00} // the immediates wrap past 2^32
					if step > 0 {
						cfg.AddrStep, cfg.AddrCycle = step, 1000 // 15 steps, then back to 0
					}
					p, err := verbs.NewPostWork(cfg, 0x10000)
					if err != nil {
						t.Fatal(err)
					}
					for _, n := range []int{1, 250, 37} {
						if err := p.Run(n, true); err != nil {
							t.Errorf("%s: %v", name, err)
						}
					}
					if p.Posted() != 288 {
						t.Errorf("%s: posted %d, want 288", name, p.Posted())
					}
					p.Close()
				}
			}
		}
	}
}

// BenchmarkPostWork times the bandwidth loop's own work per work request,
// outside the provider (no device): prebuilt work requests patched per
// post (the loop's) against a build from scratch per work request with a
// clock read per post call and two divisions (the loop before).
func BenchmarkPostWork(b *testing.B) {
	for _, pl := range []int{1, 16} {
		cfg := verbs.EngineConfig{Op: verbs.OpWrite, Size: 64, RemoteAddr: 0x900000, RKey: 9,
			TxDepth: 128, CQMod: 100, PostList: pl}
		b.Run(fmt.Sprintf("prebuilt/pl%d", pl), func(b *testing.B) {
			p, err := verbs.NewPostWork(cfg, 0x10000)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close() //nolint:errcheck // never fails
			b.ResetTimer()
			if err := p.Run(b.N, false); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("rebuild/pl%d", pl), func(b *testing.B) {
			p, err := verbs.NewPostWork(cfg, 0x10000)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close() //nolint:errcheck // never fails
			b.ResetTimer()
			p.RunRebuild(b.N)
		})
	}
}
