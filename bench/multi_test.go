package bench

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

func TestQPsThreadsValidate(t *testing.T) {
	ok := spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 64, Iters: 100, TxDepth: 8, CQMod: 1, RxDepth: 8, QPs: 8, Threads: 2}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mod  func(*spec.Spec)
		want string
	}{
		{func(s *spec.Spec) { s.QPs = spec.MaxQPs + 1 }, "--qps"},
		{func(s *spec.Spec) { s.Threads = 9 }, "--threads"},
		{func(s *spec.Spec) { s.QPs, s.Threads = 0, 2 }, "--threads"},
		{func(s *spec.Spec) { s.Mode, s.TxDepth, s.CQMod = result.ModeLat, 1, 1 }, "--qps 8 applies to bandwidth"},
		{func(s *spec.Spec) { s.Iters = 7 }, "fewer than --qps"},
		{func(s *spec.Spec) { s.Event = true }, "--event"},
	} {
		s := ok
		c.mod(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", s, err, c.want)
		}
	}
	// default modes: --qps applies to bandwidth only; explicit lat is refused
	specs, err := spec.Plan{Template: spec.Spec{QPs: 4, Threads: 2}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if (s.Mode == result.ModeBW) != (s.QPs == 4) {
			t.Errorf("%s: qps %d", s.Name(), s.QPs)
		}
	}
	if _, err := (spec.Plan{Modes: []string{result.ModeLat}, Template: spec.Spec{QPs: 4}}).Specs(); err == nil || !strings.Contains(err.Error(), "--qps") {
		t.Errorf("lat with --qps 4: %v", err)
	}
}
