package spec

import (
	"errors"
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
		{"qp thrash at Husky's scale", Load{QPs: 512, Op: "write", Size: 8, TxDepth: 4, Threads: 2}, ""},
		{"qp thrash too many", Load{QPs: 513, Op: "write", Size: 8, TxDepth: 4, Threads: 2}, "load QPs 513 out of range 1..64 (1..512 driven round robin"},
		{"65 load QPs, one thread each", Load{QPs: 65, Op: "write", Size: 8}, "load QPs 65 out of range 1..64"},
		{"65 load QPs, 65 threads", Load{QPs: 65, Op: "write", Size: 8, Threads: 65}, "load QPs 65 out of range 1..64"},
		{"mr thrash", Load{QPs: 2, Op: "write", Size: 512, MRs: 4096}, ""},
		{"load MRs too many", Load{QPs: 2, Op: "write", Size: 512, MRs: MaxLoadMRs + 1}, "load MRs 8193 out of range 0..8192"},
		{"load MRs negative", Load{QPs: 2, Op: "write", Size: 512, MRs: -1}, "load MRs -1 out of range"},
		{"load MRs without QPs", Load{Op: "write", Size: 64, ChurnSize: 1 << 20, MRs: 16}, "need at least 1 load QP"},
		{"load MRs with alt size", Load{QPs: 2, Op: "write", Size: 129, AltSize: 257, MRs: 16}, "alternate size is not supported"},
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

// TestLoadMRs: a load that spreads over MRs gives its QPs' spec the MRs
// (one 512 B slot each), and the device check refuses more than max_mr,
// the pool MRs counted, naming the limit.
func TestLoadMRs(t *testing.T) {
	s := Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1,
		Load: &Load{QPs: 2, Op: "write", Size: 512, MRs: 4096}}.WithDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	l := s.LoadSpecAt(1)
	if !s.LoadSpreads() || !s.Spreads() || s.Spread() || !l.Spread() || l.NumMRs() != 4096 || l.MRLen() != 512 || l.Slots() != 1 {
		t.Errorf("load spec: spreads %v, %d MRs of %d bytes, %d slots", l.Spread(), l.NumMRs(), l.MRLen(), l.Slots())
	}
	for _, c := range []struct {
		maxMR int
		want  string
	}{
		{0, ""}, {4098, ""},
		{4097, "load MRs 4096 (plus 0 spread and 2 pool MRs: 4098) is above rxe0's max_mr 4097"},
	} {
		err := s.CheckDeviceWorkload(DeviceLimits{Name: "rxe0", MaxMR: c.maxMR})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrNotSupported)) {
			t.Errorf("max_mr %d: %v, want %q", c.maxMR, err, c.want)
		}
	}
	if plain := (Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2}); plain.LoadSpreads() || plain.Spreads() {
		t.Error("a test without load spreads")
	}
}
