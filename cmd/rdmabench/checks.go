package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/hostenv"
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
		fs.IntVar(&b.maxQPs, "max-qps", 0, fmt.Sprintf("QPs the server opens for clients' tests at once, 1..%d (default %d: any one test)", bench.MaxBudgetQPs, spec.DefaultMaxQPs))
	}
	fs.StringVar(&b.maxMemory, "max-memory", "", what+", e.g. 512M or 8G (default: half of MemTotal, and at most a finite RLIMIT_MEMLOCK)")
}

// budget is the budget the flags give (zero fields: the defaults).
func (b *budgetFlags) budget() (bench.Budget, error) {
	var out bench.Budget
	if b.maxMemory != "" {
		n, err := bench.ParseMemory(b.maxMemory)
		if err != nil {
			return out, usageError{fmt.Errorf("--max-memory: %w", err)}
		}
		out.MaxMemory = n
	}
	if b.maxQPs != 0 && (b.maxQPs < 1 || b.maxQPs > bench.MaxBudgetQPs) {
		return out, usageError{fmt.Errorf("--max-qps %d out of range 1..%d", b.maxQPs, bench.MaxBudgetQPs)}
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

// checkWritable checks, before any test, that the results can be written
// to path (--json, --hgrm): an existing file is opened for writing
// without truncating it; a new one is created and removed again. "" and
// "-" (stdout) pass.
func checkWritable(flagName, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			defer os.Remove(path)
		}
	}
	if err != nil {
		return usageError{fmt.Errorf("--%s %s: cannot write the results there (checked before any test): %w", flagName, path, err)}
	}
	return f.Close()
}

// checkPrefix checks that files named PREFIX-... can be created (--hgrm).
func checkPrefix(flagName, prefix string) error {
	if prefix == "" {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(prefix), filepath.Base(prefix)+"-*.probe")
	if err != nil {
		return usageError{fmt.Errorf("--%s %s: cannot create files there (checked before any test): %w", flagName, prefix, err)}
	}
	f.Close()
	return os.Remove(f.Name())
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

// splitCPUs reads --cpu's list for run, loopback and isolation: the first
// CPU takes the client's engine thread, in loopback the second the
// server's responder, the rest (or, with at most two, all) the load QPs'
// threads. An empty list pins nothing (cpu -1).
func splitCPUs(list string, loopback bool) (cpu int, loadCPUs, serverCPUs []int, err error) {
	if list == "" {
		return -1, nil, nil, nil
	}
	cpus, err := spec.ParseCPUs(list, hostenv.OnlineCPUs())
	if err != nil {
		return -1, nil, nil, usageError{fmt.Errorf("--cpu: %w", err)}
	}
	cpu, loadCPUs = cpus[0], cpus
	if loopback && len(cpus) > 1 {
		serverCPUs = cpus[1:2]
	}
	if len(cpus) > 2 {
		loadCPUs = cpus[2:]
	}
	return cpu, loadCPUs, serverCPUs, nil
}

// specsCheck is the up-front check of the tests of cliffs and isolation:
// the budget, then (in loopback, or with -d) the device's limits; with
// HOST and no -d the device follows the route to the server, and its run
// checks it.
func specsCheck(d *deviceFlags, budget bench.Budget, loopback bool) func([]spec.Spec) error {
	return func(specs []spec.Spec) error {
		if err := bench.CheckBudget(specs, budget, loopback); err != nil {
			return err
		}
		if !loopback && d.device == "" {
			return nil
		}
		local, sides := netip.MustParseAddr("127.0.0.1"), 2
		if !loopback {
			local, sides = netip.Addr{}, 1
		}
		return bench.CheckDeviceLimits(d.device, d.port, d.gidIndex, local, specs, sides)
	}
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
