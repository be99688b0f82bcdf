package spec

import (
	"fmt"
	"slices"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Plan is what the client's flags ask for: a Spec template and the axes
// it is swept over (modes × ops × sizes). A new test parameter is a Spec
// field, a flag that sets it in the template, and (if it has one) a
// default in Spec.WithDefaults; nothing here changes.
type Plan struct {
	// Template holds every parameter but Op, Mode and Size. Zero fields
	// take the defaults of Spec.WithDefaults; Warmup -1 means the default.
	// Fields that apply to one mode only (latency: Rate, Schedule, Load;
	// bandwidth: TxDepth, CQMod, PostList) are dropped from the other.
	Template Spec
	Ops      []string // nil: what the QP type carries (defaultOps)
	Modes    []string // nil: latency and bandwidth
	Sizes    []int    // nil: DefaultLatSize for latency, DefaultBWSize for bandwidth
}

// Specs expands the plan into tests, in mode, op, size order. Atomics run
// at 8 bytes whatever the size list says. Every spec is validated.
func (p Plan) Specs() ([]Spec, error) {
	ops, modes := p.Ops, p.Modes
	if len(ops) == 0 {
		ops = defaultOps(p.Template.QPType)
	}
	if len(modes) == 0 {
		modes = []string{result.ModeLat, result.ModeBW}
	}
	if t := p.Template; t.Iters != 0 && t.Duration != 0 {
		return nil, fmt.Errorf("give either iterations (%d) or a duration (%v), not both", t.Iters, t.Duration)
	}
	var out []Spec
	for _, m := range modes {
		for _, op := range ops {
			sizes := p.Sizes
			if sizes == nil {
				sizes = []int{defaultSize(m)}
			}
			if t, _ := OpOf(op); t.Atomic {
				sizes = []int{AtomicSize}
			}
			for _, sz := range sizes {
				s := p.Template
				s.Op, s.Mode, s.Size = op, m, sz
				s = s.forMode(len(p.Modes) > 0).WithDefaults()
				if err := s.Validate(); err != nil {
					return nil, fmt.Errorf("%s: %w", s.Name(), err)
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// forMode clears the template fields that do not apply to s.Mode. A latency
// test runs one operation at a time (tx depth and CQ moderation 1). With
// explicit modes, --qps and -b stay on a latency spec so that Validate
// refuses them by name; with the default modes they apply to bandwidth only.
func (s Spec) forMode(explicitModes bool) Spec {
	if s.Mode == result.ModeLat {
		s.TxDepth, s.CQMod, s.PostList = 1, 1, 0
		if !explicitModes {
			s.QPs, s.Threads, s.Bidirectional = 0, 0, false
		}
		return s
	}
	s.Rate, s.Schedule, s.Load = 0, "", nil
	return s
}

// contains reports whether list holds s.
func contains(list []string, s string) bool { return slices.Contains(list, s) }
