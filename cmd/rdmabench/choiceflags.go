package main

import (
	"fmt"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// choiceFlags are the flags of the differences from perftest that are
// choices (bench/endpoint/choices.go); each defaults to perftest's behaviour.
type choiceFlags struct {
	noRelaxed, noAddrStep *bool
	compVector            *string
	pkeyIndex             *int
}

func addChoiceFlags(fs *flag.FlagSet) *choiceFlags {
	return &choiceFlags{
		noRelaxed: fs.Bool("disable-pcie-relaxed", false, "register the data path memory without PCIe relaxed ordering "+
			"(IBV_ACCESS_RELAXED_ORDERING, which is requested by default, as perftest does; perftest --disable_pcie_relaxed)"),
		noAddrStep: fs.Bool("no-addr-step", false, "bw: post every work request at the same local and remote addresses, instead of stepping "+
			"them a cache line at a time over a page-sized cycle buffer as perftest does (messages up to half a page)"),
		compVector: fs.String("comp-vector", "0", "completion vector of the CQs: N (all on vector N; 0 as perftest --eq_num/-X), "+
			"or spread (round robin over the device's num_comp_vectors)"),
		pkeyIndex: fs.Int("pkey-index", 0, "P_Key table index of the QPs, given at INIT (perftest --pkey_index); not with --rdma-cm"),
	}
}

// apply sets the spec template's choices.
func (f *choiceFlags) apply(s *spec.Spec) error {
	s.NoRelaxedOrdering, s.NoAddrStep, s.PKeyIndex = *f.noRelaxed, *f.noAddrStep, *f.pkeyIndex
	var err error
	if s.CompVector, s.CompVectorSpread, err = parseCompVector(*f.compVector); err != nil {
		return usageError{err}
	}
	if s.PKeyIndex < 0 || s.PKeyIndex > spec.MaxPKeyIndex {
		return usageError{fmt.Errorf("--pkey-index %d out of range 0..%d", s.PKeyIndex, spec.MaxPKeyIndex)}
	}
	return nil
}

// parseCompVector parses --comp-vector: a vector number, or "spread".
func parseCompVector(v string) (vector int, spread bool, err error) {
	if strings.EqualFold(strings.TrimSpace(v), "spread") {
		return 0, true, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > spec.MaxCompVector {
		return 0, false, fmt.Errorf("--comp-vector %q: want a vector 0..%d or spread", v, spec.MaxCompVector)
	}
	return n, false, nil
}
