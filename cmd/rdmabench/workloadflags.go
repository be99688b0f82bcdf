package main

import (
	"fmt"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// workloadFlags are the workload knobs (bench/spec/workload.go): where
// each operation lands and what it carries. Their defaults are perftest's
// (one target buffer, one MR per side, one SGE).
type workloadFlags struct {
	fs             *flag.FlagSet
	region         *string
	access         *string
	seed           *uint64
	mrs, sge, idle *int
}

func addWorkloadFlags(fs *flag.FlagSet) *workloadFlags {
	return &workloadFlags{fs: fs,
		region: fs.String("region", "", "READ, WRITE and atomics: spread the remote targets over a region of this size that the target side registers, "+
			"e.g. 1G (default: one message, as perftest); --access picks each operation's offset"),
		access: fs.String("access", spec.AccessSeq, "with --region or --mrs: how each operation picks its offset in the region: seq (the next message, wrapping), "+
			"random (uniform, message-aligned, seeded by --seed) or stride:N (N bytes further, wrapping)"),
		seed: fs.Uint64("seed", 0, fmt.Sprintf("seed of --access random's offsets (default %d); recorded in the JSON", spec.DefaultSeed)),
		mrs: fs.Int("mrs", 0, "spread the operations over this many MRs, round robin (random with --access random): the region split into N MRs on the target side, "+
			"one message buffer per MR on the initiator's (default 1; at most the device's max_mr)"),
		idle: fs.Int("qps-idle", 0, "connect this many more RC QPs on each side that carry nothing beside the measured ones (QP contexts; at most the device's max_qp and the server's --max-qps)"),
		sge:  fs.Int("sge", 0, "split each work request's message over this many scatter/gather entries (default 1; at most the device's max_sge, max_sge_rd for READ)"),
	}
}

// apply sets the spec template's workload knobs.
func (f *workloadFlags) apply(s *spec.Spec) error {
	if *f.region != "" {
		n, err := endpoint.ParseMemory(*f.region)
		if err != nil {
			return usageError{fmt.Errorf("--region: %w", err)}
		}
		s.Region = n
	}
	if f.fs.Changed("access") {
		a, stride, err := spec.ParseAccess(*f.access)
		if err != nil {
			return usageError{err}
		}
		s.Access, s.Stride = a, stride
	}
	s.Seed = *f.seed
	for _, v := range []struct {
		name string
		n    int
	}{{"mrs", *f.mrs}, {"sge", *f.sge}} {
		if f.fs.Changed(v.name) && v.n < 1 { // 0 would silently mean the default
			return usageError{fmt.Errorf("--%s %d: must be at least 1", v.name, v.n)}
		}
	}
	s.MRs, s.SGE, s.IdleQPs = *f.mrs, *f.sge, *f.idle
	return nil
}
