package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
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
	unit := fs.String("unit", "MiB", "bandwidth unit: MiB (MiB/sec, perftest's), MB (10^6 B/s), Gb (Gb/sec)")
	baseline := fs.String("baseline", "", "gate: compare the one file given against this baseline file; exit 1 on a regression")
	maxRegress := fs.String("max-regress", "p99=10%,bw=5%", "gate limits, METRIC=PERCENT%,...: latency metrics regress when higher, bw and mpps when lower")
	maxCounter := fs.String("max-counter", "", "gate: port counter limits of the new run, NAME=N,...: NAME is a category ("+
		strings.Join(result.TroubleCategories(), ", ")+": the sum of its counters) or a counter (e.g. rcvd_seq_err); "+
		"fails when a test's delta on the client or on the server (each side on its own) exceeds N")
	alpha := fs.Float64("alpha", compare.DefaultAlpha, "gate on repeated runs: a change regresses only when significant at this level (Mann-Whitney U test), in (0, 0.5]")
	power := fs.Float64("power", compare.DefaultPower, "gate on repeated runs: state each figure's smallest detectable change at this probability of detection, in [0.5, 0.99]")
	requirePower := fs.Bool("require-power", false, "gate: exit 9 when a figure's smallest detectable change exceeds its --max-regress limit, or a test ran once, or a figure has too few backed runs to tell (the gate cannot see a change of the limit's size); a regression still exits 1")
	subset := fs.Bool("subset", false, "gate: the new run may hold a subset of the baseline's tests, or be partial: gate the tests it has (without it, a missing test or a partial run fails the gate)")
	noise := fs.Bool("noise", false, "report each figure's run-to-run spread over repeated runs of the files given, and suggest --max-regress limits")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		switch *format {
		case "table", "markdown", "gobench":
		default:
			return usageError{fmt.Errorf("format %q unknown; valid: table, markdown, gobench", *format)}
		}
		if *unit != result.UnitMiB && *unit != result.UnitMB && *unit != result.UnitGb {
			return usageError{fmt.Errorf("unit %q unknown; valid: MiB, MB, Gb", *unit)}
		}
		mets, err := compare.ParseMetrics(*metrics)
		if err != nil {
			return usageError{err}
		}
		if *format == "gobench" && (fs.Changed("metrics") || fs.Changed("unit")) {
			return usageError{errors.New("--metrics and --unit apply to the table and markdown formats; gobench writes every metric")}
		}
		if !(*alpha > 0 && *alpha <= 0.5) {
			return usageError{fmt.Errorf("--alpha %v: want a significance level in (0, 0.5], such as 0.05", *alpha)}
		}
		if !(*power >= 0.5 && *power <= 0.99) {
			return usageError{fmt.Errorf("--power %v: want a probability of detection in [0.5, 0.99], such as 0.8", *power)}
		}
		if *noise {
			if fs.Changed("baseline") || fs.Changed("max-regress") || fs.Changed("max-counter") || fs.Changed("require-power") {
				return usageError{errors.New("--noise reports the spread of runs; it takes no --baseline, --max-regress, --max-counter or --require-power")}
			}
			return compareNoise(fs.Args(), mets, *unit, stdout)
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
		var limits map[string]float64
		var counterLimits map[string]int64
		paths := fs.Args()
		if gate {
			if *baseline == "" {
				return usageError{errors.New("--baseline needs a file name")}
			}
			if *format == "gobench" {
				return usageError{errors.New("--baseline works with the table and markdown formats, not gobench")}
			}
			if len(paths) != 1 {
				return usageError{fmt.Errorf("with --baseline, give exactly one new result file (got %d)", len(paths))}
			}
			if limits, err = compare.ParseMaxRegress(*maxRegress); err != nil {
				return usageError{err}
			}
			if fs.Changed("max-counter") {
				if counterLimits, err = compare.ParseMaxCounter(*maxCounter); err != nil {
					return usageError{err}
				}
			}
			paths = append([]string{*baseline}, paths...)
		} else if len(paths) == 0 {
			return usageError{errors.New("compare needs one or more result files (rdmabench run/loopback --json FILE)")}
		}
		stdin := 0
		for _, p := range paths {
			if p == "-" {
				stdin++
			}
		}
		if stdin > 1 {
			return usageError{errors.New("only one file can be - (stdin)")}
		}
		if meshes := countMesh(paths); meshes > 0 {
			if meshes != len(paths) {
				return usageError{fmt.Errorf("%d of %d files are mesh documents: compare mesh documents only with mesh documents", meshes, len(paths))}
			}
			if *format == "gobench" {
				return usageError{errors.New("mesh documents compare as tables (table format), not gobench")}
			}
			if *requirePower {
				return usageError{errors.New("--require-power applies to result documents of repeated runs (--repeat), not mesh documents")}
			}
			return compareMesh(paths, gate, limits, mets, *unit, stdout)
		}
		docs := make([]*result.Document, len(paths))
		for i, p := range paths {
			if docs[i], err = readDocument(p); err != nil {
				return err
			}
		}
		if gate {
			if u := compare.Unrecorded(limits, docs...); len(u) > 0 {
				return usageError{fmt.Errorf("--max-regress %q: %s is not recorded in %s and %s (only p50, p90, p99, p99.9, p99.99 and the --percentiles a run lists are): no limit on it can be judged",
					*maxRegress, strings.Join(u, ", "), paths[0], paths[1])}
			}
		}

		if *format == "gobench" {
			return compare.WriteGobench(stdout, docs)
		}
		c := compare.Compare(docs, runNames(paths))
		if *format == "markdown" {
			err = c.WriteMarkdown(stdout, mets, *unit)
		} else {
			err = c.WriteTable(stdout, mets, *unit)
		}
		if err != nil || !gate {
			return err
		}

		g := compare.GateWith(docs[0], docs[1], limits, compare.GateOptions{Alpha: *alpha, Power: *power})
		g.CheckCounters(docs[1], counterLimits)
		bullet := ""
		if *format == "markdown" {
			bullet = "- "
		}
		fmt.Fprintln(stdout)
		if len(g.EnvDiffs) > 0 {
			fmt.Fprintf(stdout, "%snote: the environments differ in %d fields (baseline -> new):\n", bullet, len(g.EnvDiffs))
			sub := "  " // under the note: indented, in Markdown a nested list
			if bullet != "" {
				sub = "  - "
			}
			for _, d := range g.EnvDiffs {
				fmt.Fprintf(stdout, "%senv %s\n", sub, d)
			}
		}
		for _, n := range g.Notes {
			fmt.Fprintf(stdout, "%snote: %s\n", bullet, n)
		}
		for _, c := range g.Changes {
			fmt.Fprintf(stdout, "%s%s\n", bullet, c.FormatChange(*unit, g.Alpha))
		}
		if len(g.Changes) > 0 {
			fmt.Fprintf(stdout, "%srepeated runs: medians of the runs; p: Mann-Whitney U test; ~: not significant at alpha %g\n", bullet, g.Alpha)
		}
		for _, d := range g.Detectable {
			fmt.Fprintf(stdout, "%s%s\n", bullet, d)
		}
		if len(g.Detectable) > 0 {
			fmt.Fprintf(stdout, "%sdetectable change: the smallest change in the bad direction that the runs' spread and counts let the gate find at alpha %g with probability %g%% (a bootstrap of the runs, docs/statistics.md)\n",
				bullet, g.Alpha, g.Power*100)
		}
		for _, r := range g.Regressions {
			fmt.Fprintf(stdout, "%sREGRESSION %s\n", bullet, r.Format(*unit))
		}
		for _, c := range g.Counters {
			fmt.Fprintf(stdout, "%sREGRESSION %s (--max-counter)\n", bullet, c)
		}
		if err := g.Err(); err != nil {
			return err
		}
		if err := g.IncompleteErr(*subset); err != nil {
			return err
		}
		if *subset && (len(g.Missing) > 0 || g.Partial) {
			fmt.Fprintf(stdout, "%snote: --subset: %d of the baseline's %d tests gated (partial new run: %v)\n", bullet, g.Tests, g.BaseTests, g.Partial)
		}
		blind := g.Underpowered()
		if g.Tests == 0 {
			return fmt.Errorf("no test is in both %s and %s: nothing to gate", paths[0], paths[1])
		}
		if err := g.CannotTellErr(); err != nil {
			return err
		}
		if g.Checked == 0 {
			return fmt.Errorf("none of the metrics in --max-regress %q could be checked (see the notes)", *maxRegress)
		}
		if counterLimits != nil && g.CountersChecked == 0 {
			return fmt.Errorf("none of the counter limits in --max-counter %q could be checked: %s has no port counters (see the notes)", *maxCounter, paths[1])
		}
		counters := ""
		if counterLimits != nil {
			counters = fmt.Sprintf(", %d counter limits checked", g.CountersChecked)
		}
		if len(blind) > 0 {
			counters += fmt.Sprintf("; %d of them underpowered, see UNDERPOWERED above", len(blind))
		}
		fmt.Fprintf(stdout, "%sno regressions (%d tests, %d metrics checked%s)\n", bullet, g.Tests, g.Checked, counters)
		if *requirePower {
			return g.PowerErr()
		}
		return nil
	}
}

// runNames labels result files by base name ("stdin" for -), or by the path
// as given where base names collide, with "#N" added for a repeated path.
func runNames(paths []string) []string {
	base := func(p string) string {
		if p == "-" {
			return "stdin"
		}
		return filepath.Base(p)
	}
	count := map[string]int{}
	for _, p := range paths {
		count[base(p)]++
	}
	names := make([]string, len(paths))
	seen := map[string]int{}
	for i, p := range paths {
		n := base(p)
		if count[n] > 1 {
			n = p
		}
		seen[n]++
		if seen[n] > 1 {
			n += "#" + strconv.Itoa(seen[n])
		}
		names[i] = n
	}
	return names
}

// compareNoise implements compare --noise: the spread of each figure over
// the runs in paths.
func compareNoise(paths, metrics []string, unit string, stdout io.Writer) error {
	if len(paths) == 0 {
		return usageError{errors.New("--noise needs one or more result files with repeated runs (run --repeat K --json FILE)")}
	}
	docs := make([]*result.Document, len(paths))
	for i, p := range paths {
		var err error
		if docs[i], err = readDocument(p); err != nil {
			return err
		}
	}
	return compare.Noise(docs, metrics).Write(stdout, unit)
}

// countMesh counts the mesh documents among paths (stdin is never one).
func countMesh(paths []string) int {
	n := 0
	for _, p := range paths {
		if isMeshFile(p) {
			n++
		}
	}
	return n
}

// compareMesh is compare for mesh documents: a table per pair, and with
// gate the pair-by-pair gate (exit 1 naming the regressed pairs).
func compareMesh(paths []string, gate bool, limits map[string]float64, mets []string, unit string, stdout io.Writer) error {
	docs := make([]*result.MeshDocument, len(paths))
	for i, p := range paths {
		var err error
		if docs[i], err = readMeshDocument(p); err != nil {
			return err
		}
	}
	if err := compare.WriteMeshTables(stdout, docs, runNames(paths), mets, unit); err != nil {
		return err
	}
	if !gate {
		return nil
	}
	g := compare.GateMesh(docs[0], docs[1], limits)
	for _, n := range g.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	for _, f := range g.Failed {
		fmt.Fprintf(stdout, "REGRESSION pair %s: failed in the new run\n", f)
	}
	for _, r := range g.Regressions {
		fmt.Fprintf(stdout, "REGRESSION pair %s: %s\n", r.Pair, r.Format(unit))
	}
	for _, r := range g.Fairness {
		fmt.Fprintf(stdout, "REGRESSION all-to-one fairness %s\n", r.Format())
	}
	if err := g.Err(); err != nil {
		return err
	}
	if g.Checked == 0 {
		return fmt.Errorf("no pair metric of %s could be checked against %s (see the notes)", paths[1], paths[0])
	}
	fmt.Fprintf(stdout, "no regressions (%d pairs, %d metrics checked)\n", g.Pairs, g.Checked)
	return nil
}
