package main

import (
	"fmt"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Checks of command-line values that the Spec does not hold, made before
// any device is opened, connection made or test run: each refusal is a
// usageError (exit 2) naming the flag, the value and the limit.

// budgetFlags are --max-memory and (server) --max-qps.
type budgetFlags struct {
	maxMemory string
	maxQPs    int
}

func (b *budgetFlags) add(fs *flag.FlagSet, server bool) {
	what := "memory this process maps for its tests (both sides in loopback); a test that needs more is refused before anything is mapped"
	if server {
		what = "memory the server maps and registers for clients' tests at once; a test that needs more is refused with the figures"
		fs.IntVar(&b.maxQPs, "max-qps", 0, fmt.Sprintf("QPs the server opens for clients' tests at once, 1..%d (default %d: any one test)", endpoint.MaxBudgetQPs, spec.DefaultMaxQPs))
	}
	fs.StringVar(&b.maxMemory, "max-memory", "", what+", e.g. 512M or 8G (default: half of MemTotal, and at most a finite RLIMIT_MEMLOCK)")
}

// budget is the budget the flags give (zero fields: the defaults).
func (b *budgetFlags) budget() (endpoint.Budget, error) {
	var out endpoint.Budget
	if b.maxMemory != "" {
		n, err := endpoint.ParseMemory(b.maxMemory)
		if err != nil {
			return out, usageError{fmt.Errorf("--max-memory: %w", err)}
		}
		out.MaxMemory = n
	}
	if b.maxQPs != 0 && (b.maxQPs < 1 || b.maxQPs > endpoint.MaxBudgetQPs) {
		return out, usageError{fmt.Errorf("--max-qps %d out of range 1..%d", b.maxQPs, endpoint.MaxBudgetQPs)}
	}
	out.MaxQPs = b.maxQPs
	return out, nil
}

// checkDevice refuses an explicit negative --gid-index (-1 is auto only
// as the default: omit -x) and a port outside 1..255 (left out, the port
// is 0: chosen with the device, by route or the first active one).
func (d *deviceFlags) check(fs *flag.FlagSet) error {
	if fs.Changed("gid-index") && d.gidIndex < 0 {
		return usageError{fmt.Errorf("--gid-index %d: want a GID index 0..255 of the port's table ('rdmabench devices' lists it); omit -x to pick one by the control address", d.gidIndex)}
	}
	if d.gidIndex > 255 {
		return usageError{fmt.Errorf("--gid-index %d out of range 0..255", d.gidIndex)}
	}
	if fs.Changed("ib-port") && (d.port < 1 || d.port > 255) { // unset: 0, the chosen port
		return usageError{fmt.Errorf("--ib-port %d out of range 1..255", d.port)}
	}
	return nil
}

// intRange is a flag's value and its allowed range.
type intRange struct {
	name   string
	v      int64
	lo, hi int64
}

// checkRanges refuses the first value outside its range.
func checkRanges(rs ...intRange) error {
	for _, r := range rs {
		if r.v < r.lo || r.v > r.hi {
			return usageError{fmt.Errorf("--%s %d out of range %d..%d", r.name, r.v, r.lo, r.hi)}
		}
	}
	return nil
}

// checkDurations refuses negative durations and those above a day.
func checkDurations(ds map[string]time.Duration) error {
	for name, d := range ds {
		if d < 0 || d > spec.MaxDuration {
			return usageError{fmt.Errorf("--%s %v out of range 0..%v", name, d, spec.MaxDuration)}
		}
	}
	return nil
}

// checkWritable refuses a --json or --hgrm path the results cannot be
// written to (result.CheckWritable), before any test.
func checkWritable(flagName, path string) error {
	if err := result.CheckWritable(path); err != nil {
		return usageError{fmt.Errorf("--%s %s: cannot write the results there (checked before any test): %w", flagName, path, err)}
	}
	return nil
}

// checkPrefix refuses an --hgrm prefix whose files cannot be created
// (result.CheckPrefix), before any test.
func checkPrefix(flagName, prefix string) error {
	if err := result.CheckPrefix(prefix); err != nil {
		return usageError{fmt.Errorf("--%s %s: cannot create files there (checked before any test): %w", flagName, prefix, err)}
	}
	return nil
}

// checkRunFlags checks the flags of run and loopback that no Spec field
// holds (Spec.Validate checks the rest when the plan is expanded).
func checkRunFlags(fs *flag.FlagSet, d *deviceFlags, port, loadQPs int, warmup int64, jsonPath, hgrm string, ds map[string]time.Duration) error {
	if err := d.check(fs); err != nil {
		return err
	}
	if fs.Changed("warmup") && warmup < 0 {
		return usageError{fmt.Errorf("--warmup %d: want 0..%d iterations (omit it for the default)", warmup, int64(spec.MaxIters))}
	}
	if err := checkRanges(intRange{"load-qps", int64(loadQPs), 0, spec.MaxLoadQPs}); err != nil {
		return err
	}
	if fs.Lookup("port") != nil {
		if err := checkRanges(intRange{"port", int64(port), 1, 65535}); err != nil {
			return err
		}
	}
	if c := ds["connect-timeout"]; c <= 0 {
		return usageError{fmt.Errorf("--connect-timeout %v: must be positive", c)}
	}
	if err := checkDurations(ds); err != nil {
		return err
	}
	if err := checkWritable("json", jsonPath); err != nil {
		return err
	}
	return checkPrefix("hgrm", hgrm)
}

// writeDocument prints a document's table (unless --json is -) and
// writes its JSON (with --json), keeping err, the measurement's outcome,
// first.
func writeDocument(jsonPath string, err error, table func() error, writeJSON func(path string) error) error {
	if jsonPath != "-" {
		if werr := table(); werr != nil && err == nil {
			err = werr
		}
	}
	if jsonPath != "" {
		if werr := writeJSON(jsonPath); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}
