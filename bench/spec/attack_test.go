package spec

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestLoadAttackKnobs: the attacker knobs of a load are checked with a
// message naming the value and the limit; valid ones pass, and each load
// QP gets its own size.
func TestLoadAttackKnobs(t *testing.T) {
	lat := func(l Load) Spec {
		return Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1, Load: &l}.WithDefaults()
	}
	for _, c := range []struct {
		name string
		l    Load
		want string // "" valid
	}{
		{"pcie sizes", Load{QPs: 4, Op: "write", Size: 129, AltSize: 257}, ""},
		{"rnr storm", Load{QPs: 2, Op: "send", Size: 64, TxDepth: 16, RNR: true}, ""},
		{"send without rnr", Load{QPs: 2, Op: "send", Size: 64}, `load op "send" invalid`},
		{"rnr write", Load{QPs: 2, Op: "write", Size: 64, RNR: true}, `RNR storm sends: op "write" invalid`},
		{"churn alone", Load{Op: "write", Size: 64, ChurnSize: 1 << 20}, ""},
		{"churn too big", Load{Op: "write", Size: 64, ChurnSize: MaxChurnSize + 1}, "churn size 67108865 bytes out of range 0..67108864"},
		{"no QPs, no churn", Load{Op: "write", Size: 64}, "load QPs 0 out of range 1..64"},
		{"alt size, one QP", Load{QPs: 1, Op: "write", Size: 129, AltSize: 257}, "needs at least 2 load QPs"},
		{"alt size too big", Load{QPs: 2, Op: "write", Size: 129, AltSize: MaxSize + 1}, "alternate size"},
		{"threads round robin", Load{QPs: 64, Op: "write", Size: 8, TxDepth: 4, Threads: 2}, ""},
		{"threads above QPs", Load{QPs: 2, Op: "write", Size: 8, Threads: 3}, "load threads 3 out of range 0..2"},
	} {
		err := lat(c.l).Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	s := lat(Load{QPs: 4, Op: "write", Size: 129, AltSize: 257})
	if s.LoadSpec().Size != 257 || s.LoadSpecAt(0).Size != 129 || s.LoadSpecAt(1).Size != 257 || s.LoadSpecAt(2).Size != 129 {
		t.Errorf("sizes %d %d %d", s.LoadSpec().Size, s.LoadSpecAt(0).Size, s.LoadSpecAt(1).Size)
	}
	if s := lat(Load{QPs: 2, Op: "write", Size: 64}); s.LoadSpec().Size != 64 || s.LoadSpecAt(1).Size != 64 {
		t.Errorf("plain load sizes %d %d", s.LoadSpec().Size, s.LoadSpecAt(1).Size)
	}
}
