package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/result"
)

// compareLong is the description of 'rdmabench compare' (its help and man page).
const compareLong = `Lines up the tests (op, mode, size) of rdmabench JSON results side by side, one
column per file; each column after the first shows its ratio to the first.
Mesh documents (rdmabench mesh --json) compare pair by pair: one table per
pair, and the gate names every pair that regressed or failed.
With --baseline, also checks NEW.json against BASE.json and exits 1 on a
regression beyond --max-regress, or when a port counter of a test of NEW.json
moved more than --max-counter allows. When both files ran each test several
times (run --repeat K), a change counts only when it is also significant: the
Mann-Whitney U test of the two sets of runs gives p < --alpha. Every figure
checked is listed with its p-value; ~ marks a change that is not significant.
Each such figure is also listed with the smallest change the runs could
detect at --alpha with probability --power (a bootstrap of the runs); where
that exceeds the figure's --max-regress limit, an UNDERPOWERED line names it
with the --repeat or -n that would resolve it, and --require-power makes that
case (and single runs, whose noise cannot be judged) exit 9 instead of 0.
The environment fields that differ between the two files are named.
With --noise, reports each figure's run-to-run spread over repeated runs (or
several files of the same tests) and suggests --max-regress limits.`

// cmdCompare implements 'rdmabench compare': side-by-side tables of result
// files, the Go benchmark format for benchstat, and the regression gate.
func cmdCompare(fs *flag.FlagSet) action {
	format := fs.String("format", "table", "output: table (aligned text), markdown (GitHub table), gobench (Go benchmark format, for benchstat)")
	metrics := fs.String("metrics", "", "table rows per test, from p50,p90,p99,p99_9,p99_99,mean,max,bw,mpps (default: p50,p99,p99_9,max for lat tests; bw,p50,p99 for bw tests)")
	unit := fs.String("unit", result.UnitMiB, "bandwidth unit: MiB (MiB/sec, perftest's), MB (10^6 B/s), Gb (Gb/sec)")
	baseline := fs.String("baseline", "", "gate: compare the one file given against this baseline file; exit 1 on a regression")
	maxRegress := fs.String("max-regress", "p99=10%,bw=5%", "gate limits, METRIC=PERCENT%,...: latency metrics regress when higher, bw and mpps when lower")
	maxCounter := fs.String("max-counter", "", "gate: port counter limits of the new run, NAME=N,...: NAME is a category ("+
		strings.Join(result.TroubleCategories(), ", ")+": the sum of its counters) or a counter (e.g. rcvd_seq_err); "+
		"fails when a test's delta on the client or on the server (each side on its own) exceeds N")
	alpha := fs.Float64("alpha", compare.DefaultAlpha, "gate on repeated runs: a change regresses only when significant at this level (Mann-Whitney U test), in (0, 0.5]")
	power := fs.Float64("power", compare.DefaultPower, "gate on repeated runs: state each figure's smallest detectable change at this probability of detection, in [0.5, 0.99]")
	requirePower := fs.Bool("require-power", false, "gate: exit 9 when a figure's smallest detectable change exceeds its --max-regress limit, or a test ran once, or a figure has too few backed runs to tell (the gate cannot see a change of the limit's size); a regression still exits 1")
	subset := fs.Bool("subset", false, "gate: the new run may hold a subset of the baseline's tests, or be partial: gate the tests it has (without it, a missing test or a partial run fails the gate)")
	wide := addWideFlag(fs)
	noise := fs.Bool("noise", false, "report each figure's run-to-run spread over repeated runs of the files given, and suggest --max-regress limits")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		switch *format {
		case compare.FormatTable, compare.FormatMarkdown, compare.FormatGobench:
		default:
			return usageError{fmt.Errorf("format %q unknown; valid: table, markdown, gobench", *format)}
		}
		if err := checkUnit(*unit); err != nil {
			return err
		}
		mets, err := compare.ParseMetrics(*metrics)
		if err != nil {
			return usageError{err}
		}
		if *format == compare.FormatGobench && (fs.Changed("metrics") || fs.Changed("unit")) {
			return usageError{errors.New("--metrics and --unit apply to the table and markdown formats; gobench writes every metric")}
		}
		if !(*alpha > 0 && *alpha <= 0.5) {
			return usageError{fmt.Errorf("--alpha %v: want a significance level in (0, 0.5], such as 0.05", *alpha)}
		}
		if !(*power >= 0.5 && *power <= 0.99) {
			return usageError{fmt.Errorf("--power %v: want a probability of detection in [0.5, 0.99], such as 0.8", *power)}
		}
		cfg := compare.Config{Paths: fs.Args(), Format: *format, Metrics: mets, Unit: *unit, Noise: *noise, Width: tableWidth(*wide)}
		if *noise {
			if fs.Changed("baseline") || fs.Changed("max-regress") || fs.Changed("max-counter") || fs.Changed("require-power") {
				return usageError{errors.New("--noise reports the spread of runs; it takes no --baseline, --max-regress, --max-counter or --require-power")}
			}
			if len(cfg.Paths) == 0 {
				return usageError{errors.New("--noise needs one or more result files with repeated runs (run --repeat K --json FILE)")}
			}
			return verdictErr(compare.Files(stdout, cfg))
		}
		gate := fs.Changed("baseline")
		if !gate && fs.Changed("max-regress") {
			return usageError{errors.New("--max-regress needs --baseline")}
		}
		if !gate && fs.Changed("max-counter") {
			return usageError{errors.New("--max-counter needs --baseline")}
		}
		if !gate && *subset {
			return usageError{errors.New("--subset needs --baseline")}
		}
		if !gate && (*requirePower || fs.Changed("power")) {
			return usageError{errors.New("--require-power and --power need --baseline")}
		}
		if gate {
			if *baseline == "" {
				return usageError{errors.New("--baseline needs a file name")}
			}
			if *format == compare.FormatGobench {
				return usageError{errors.New("--baseline works with the table and markdown formats, not gobench")}
			}
			if len(cfg.Paths) != 1 {
				return usageError{fmt.Errorf("with --baseline, give exactly one new result file (got %d)", len(cfg.Paths))}
			}
			g := &compare.GateConfig{MaxRegress: *maxRegress, MaxCounter: *maxCounter, Subset: *subset, RequirePower: *requirePower,
				Options: compare.GateOptions{Alpha: *alpha, Power: *power}}
			if g.Limits, err = compare.ParseMaxRegress(*maxRegress); err != nil {
				return usageError{err}
			}
			if fs.Changed("max-counter") {
				if g.Counters, err = compare.ParseMaxCounter(*maxCounter); err != nil {
					return usageError{err}
				}
			}
			cfg.Paths, cfg.Gate = append([]string{*baseline}, cfg.Paths...), g
		} else if len(cfg.Paths) == 0 {
			return usageError{errors.New("compare needs one or more result files (rdmabench run/loopback --json FILE)")}
		}
		if countStdin(cfg.Paths) > 1 {
			return usageError{errors.New("only one file can be - (stdin)")}
		}
		return verdictErr(compare.Files(stdout, cfg))
	}
}

// verdictErr is the error compare returns for the verdict v (exit codes:
// main.go): a refusal is a usage error, an unreadable file an input
// error, a blind gate exits 9; a failure keeps its own error (exit 1).
func verdictErr(v compare.Verdict, err error) error {
	switch v {
	case compare.Refused:
		return usageError{err}
	case compare.Unreadable:
		return inputError{err}
	case compare.Blind:
		return blindError{err}
	}
	return err
}
