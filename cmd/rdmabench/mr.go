package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/mr"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// mrLong is the description of 'rdmabench mr' (its help and man page).
const mrLong = `Measures what memory registration costs on one device, in this process:
  1. ibv_reg_mr and ibv_dereg_mr latency (p50, p99, max) for each buffer size,
     and the registration rate (size / reg p50);
  2. RDMA WRITEs of --op-size to a passive QP on the same device, one at a
     time, from one pre-registered MR (pooled) against registering and
     deregistering the source around every WRITE (per-op), with their
     throughput ratio: what an MR cache gains.
Sizes that RLIMIT_MEMLOCK, MemAvailable, free huge pages or the device's
max_mr_size do not allow are skipped with a note naming the limit.`

// cmdMR is 'rdmabench mr'.
func cmdMR(fs *flag.FlagSet) action {
	var d deviceFlags
	d.add(fs)
	sizes := fs.String("sizes", "4K,64K,1M,16M,256M", "registration sizes: list and power-of-two ranges, e.g. 4K,1M or 4K-1G")
	iters := fs.IntP("iters", "n", mr.DefaultIters, "measured ibv_reg_mr/ibv_dereg_mr pairs per size")
	perSize := fs.Duration("time-per-size", mr.DefaultTimePerSize, "stop a size's pairs after this long (at least 2 pairs; 0: no limit)")
	opSize := fs.String("op-size", "4K", "RDMA WRITE size of the pooled against per-op comparison")
	opIters := fs.Int("op-iters", mr.DefaultOpIters, "measured RDMA WRITEs per registration mode")
	odp := fs.Bool("odp", false, "register with IBV_ACCESS_ON_DEMAND (On-Demand Paging; fails where the device has none)")
	huge := fs.Bool("hugepages", false, "allocate buffers from 2 MiB huge pages (reserve them with sysctl vm.nr_hugepages=N)")
	jsonPath := fs.String("json", "", "write the result document to this file (- for stdout)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() != 0 {
			return usageError{fmt.Errorf("mr takes no arguments (got %q)", fs.Args())}
		}
		if err := d.check(fs); err != nil {
			return err
		}
		if err := checkWritable("json", *jsonPath); err != nil {
			return err
		}
		cfg := mr.Config{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, Iters: *iters, TimePerSize: *perSize,
			OpIters: *opIters, ODP: *odp, HugePages: *huge, Progress: stderr, CommandLine: os.Args}
		if *perSize == 0 {
			cfg.TimePerSize = -1 // no limit
		}
		var err error
		if cfg.Sizes, err = spec.ParseSizes(*sizes); err != nil {
			return usageError{fmt.Errorf("--sizes: %w", err)}
		}
		if cfg.OpSize, err = spec.ParseSize(*opSize); err != nil {
			return usageError{fmt.Errorf("--op-size: %w", err)}
		}
		switch {
		case *iters < 1 || *iters > 1000000:
			return usageError{fmt.Errorf("--iters %d out of range 1..1000000", *iters)}
		case *opIters < 1 || *opIters > 10000000:
			return usageError{fmt.Errorf("--op-iters %d out of range 1..10000000", *opIters)}
		case *perSize < 0:
			return usageError{fmt.Errorf("--time-per-size %v is negative", *perSize)}
		case fs.Changed("ib-port") && d.port < 1: // unset: port 1
			return usageError{fmt.Errorf("--ib-port %d must be at least 1", d.port)}
		}
		doc, err := mr.Run(ctx, cfg)
		if errors.Is(err, endpoint.ErrNoHugePages) {
			err = envError{err}
		}
		if doc != nil {
			if err != nil {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("incomplete: %v", err))
			}
			if *jsonPath != "-" {
				if werr := mr.WriteReport(stdout, doc); werr != nil && err == nil {
					err = werr
				}
			}
			if *jsonPath != "" {
				if werr := mr.WriteJSONFile(*jsonPath, doc); werr != nil && err == nil {
					err = werr
				}
			}
		}
		return err
	}
}

// envError marks a missing host resource (here: huge pages) so that it
// exits with exitEnv, like an unsupported device feature.
type envError struct{ err error }

func (e envError) Error() string { return e.err.Error() }
func (e envError) Unwrap() error { return e.err }

// Is makes errors.Is(err, verbs.ErrNotSupported) true, which exitCode maps
// to exitEnv.
func (e envError) Is(target error) bool { return target == verbs.ErrNotSupported }
