package compare

// 'rdmabench compare' whole: the files read (result.Open: their kinds
// named, mesh documents only with mesh documents), the tables, the gate's
// lines and its verdict (docs/regression.md). The command turns its flags
// into a Config and its Verdict into the exit status.

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Formats of Config.Format.
const (
	FormatTable    = "table"    // aligned text
	FormatMarkdown = "markdown" // GitHub tables; the gate's lines as a list
	FormatGobench  = "gobench"  // the Go benchmark format, for benchstat (no gate)
)

// Verdict is the outcome of Files: what the exit status of rdmabench compare
// says (docs/exit-codes.md). Every verdict but Pass comes with an error
// that says why.
type Verdict int

const (
	// Pass: the tables were written, and the gate, if any, found no
	// regression (exit 0).
	Pass Verdict = iota
	// Fail: the gate found a regression or a counter past its limit
	// (*RegressionError, *MeshRegressionError), a new run that does not
	// cover the baseline (*IncompleteError), no test in both files or
	// no limit it could check; or the output could not be written
	// (exit 1).
	Fail
	// Refused: the files do not go with the options: mesh documents
	// beside result documents, a format or option mesh documents do not
	// take, a limit on a percentile the documents do not record. Found
	// before anything is written (exit 2, as a usage error).
	Refused
	// Unreadable: a file cannot be read, is too large, is not a
	// document of the kind compared, or breaks an invariant (an
	// *result.InputError; exit 8).
	Unreadable
	// Blind: no regression, but the gate could not see: a limit n/a in
	// both runs of every test (*CannotTellError), or with RequirePower a
	// figure whose runs could not show a change of its limit, or single
	// runs (*PowerError; exit 9).
	Blind
)

var verdictNames = [...]string{Pass: "pass", Fail: "fail", Refused: "refused", Unreadable: "unreadable", Blind: "blind"}

func (v Verdict) String() string {
	if v >= 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// GateConfig is the gate of a comparison (compare --baseline).
type GateConfig struct {
	// Limits are the --max-regress limits (ParseMaxRegress), MaxRegress
	// the flag as given, named when no limit could be checked.
	Limits     map[string]float64
	MaxRegress string
	// Counters are the --max-counter limits (ParseMaxCounter; nil: none),
	// MaxCounter the flag as given. Result documents only.
	Counters   map[string]int64
	MaxCounter string
	Options    GateOptions
	// Subset gates the tests the new run has: a new run that lacks tests
	// of the baseline, or is partial, passes (IncompleteErr).
	Subset bool
	// RequirePower makes a gate that could not see a change of the
	// limits' size Blind instead of Pass (PowerErr). Result documents
	// only.
	RequirePower bool
}

// Config is one comparison.
type Config struct {
	// Paths are the files, "-" for stdin (at most once); with Gate, the
	// baseline and then the new run.
	Paths   []string
	Format  string   // FormatTable, FormatMarkdown or FormatGobench
	Metrics []string // the tables' rows (ParseMetrics); nil: by mode
	Unit    string   // bandwidth unit: result.UnitMiB, UnitMB, UnitGb
	// Width is the columns the text tables and lines fit (report.Width);
	// 0: each table whole, however wide (--wide).
	Width int
	// Noise reports each figure's run-to-run spread over the files'
	// repeated runs (NoiseReport) instead of the tables; result
	// documents only, no Gate.
	Noise bool
	Gate  *GateConfig // nil: the tables alone
}

// Files compares the documents of c.Paths and writes the tables to w; with
// c.Gate it gates the new run against the baseline and writes the gate's
// lines. Mesh documents compare only with mesh documents, pair by pair.
// The verdict is Pass or comes with its error.
func Files(w io.Writer, c Config) (Verdict, error) {
	if c.Noise {
		docs, err := result.ReadResults(c.Paths)
		if err != nil {
			return Unreadable, err
		}
		return written(Noise(docs, c.Metrics).Write(w, c.Unit))
	}
	ins := result.OpenAll(c.Paths)
	meshes := 0
	for _, in := range ins {
		if in.Kind == result.KindMesh {
			meshes++
		}
	}
	if meshes > 0 {
		switch {
		case meshes != len(ins):
			return Refused, fmt.Errorf("%d of %d files are mesh documents: compare mesh documents only with mesh documents", meshes, len(ins))
		case c.Format == FormatGobench:
			return Refused, fmt.Errorf("mesh documents compare as tables (table format), not gobench")
		case c.Gate != nil && c.Gate.RequirePower:
			return Refused, fmt.Errorf("--require-power applies to result documents of repeated runs (--repeat), not mesh documents")
		}
		return runMesh(w, ins, c)
	}
	docs, err := result.Results(ins)
	if err != nil {
		return Unreadable, err
	}
	g := c.Gate
	if g != nil {
		if u := Unrecorded(g.Limits, docs...); len(u) > 0 {
			return Refused, fmt.Errorf("--max-regress %q: %s is not recorded in %s and %s (only p50, p90, p99, p99.9, p99.99 and the --percentiles a run lists are): no limit on it can be judged",
				g.MaxRegress, strings.Join(u, ", "), c.Paths[0], c.Paths[1])
		}
	}
	if c.Format == FormatGobench {
		return written(WriteGobench(w, docs))
	}
	cmp := Compare(docs, Names(c.Paths))
	bullet := ""
	if c.Format == FormatMarkdown {
		err, bullet = cmp.WriteMarkdown(w, c.Metrics, c.Unit), "- "
	} else {
		err = cmp.WriteTable(w, c.Metrics, c.Unit, c.Width)
	}
	if err != nil || g == nil {
		return written(err)
	}
	rep := GateWith(docs[0], docs[1], g.Limits, g.Options)
	rep.CheckCounters(docs[1], g.Counters)
	rep.write(w, c.Unit, bullet)
	return rep.judge(w, *g, [2]string{c.Paths[0], c.Paths[1]}, bullet)
}

// written is the verdict of output whose writing ended with err.
func written(err error) (Verdict, error) {
	if err != nil {
		return Fail, err
	}
	return Pass, nil
}

// write writes the gate's findings, one a line (markdown: bullet "- "):
// the environment's differences, the notes, every check of repeated
// runs, what each could detect, the regressions. In text, a line wider
// than report.Width goes on, indented, on the next.
func (g *GateReport) write(w io.Writer, unit, bullet string) {
	line := func(format string, a ...any) {
		s := fmt.Sprintf(format, a...)
		if bullet == "" {
			s = report.Note(s)
		} else {
			s += "\n"
		}
		io.WriteString(w, s)
	}
	fmt.Fprintln(w)
	if len(g.EnvDiffs) > 0 {
		line("%snote: the environments differ in %d fields (baseline -> new):", bullet, len(g.EnvDiffs))
		sub := "  " // under the note: indented, in Markdown a nested list
		if bullet != "" {
			sub = "  - "
		}
		for _, d := range g.EnvDiffs {
			line("%senv %s", sub, d)
		}
	}
	for _, n := range g.Notes {
		line("%snote: %s", bullet, n)
	}
	for _, c := range g.Changes {
		line("%s%s", bullet, c.FormatChange(unit, g.Alpha))
	}
	if len(g.Changes) > 0 {
		line("%srepeated runs: medians of the runs; p: Mann-Whitney U test; ~: not significant at alpha %g", bullet, g.Alpha)
	}
	for _, d := range g.Detectable {
		line("%s%s", bullet, d)
	}
	if len(g.Detectable) > 0 {
		line("%sdetectable change: the smallest change in the bad direction that the runs' spread and counts let the gate find at alpha %g with probability %g%% (a bootstrap of the runs, docs/statistics.md)",
			bullet, g.Alpha, g.Power*100)
	}
	for _, r := range g.Regressions {
		line("%sREGRESSION %s", bullet, r.Format(unit))
	}
	for _, c := range g.Counters {
		line("%sREGRESSION %s (--max-counter)", bullet, c)
	}
}

// judge is the gate's verdict on g under c, by its rules in their order
// (docs/regression.md): a regression or a counter past its limit fails;
// so does a new run that does not cover the baseline, unless c.Subset
// (which says how many tests it gated); so do no test in both files
// (names: the baseline's and the new run's), no metric checked at all, and
// counter limits of which none could be checked. A limit n/a in both runs
// of every test is blind. Then "no regressions" is written, and with
// c.RequirePower a gate that could not see the limits' size is blind.
func (g *GateReport) judge(w io.Writer, c GateConfig, names [2]string, bullet string) (Verdict, error) {
	if err := g.Err(); err != nil {
		return Fail, err
	}
	if err := g.IncompleteErr(c.Subset); err != nil {
		return Fail, err
	}
	if c.Subset && (len(g.Missing) > 0 || g.Partial) {
		fmt.Fprintf(w, "%snote: --subset: %d of the baseline's %d tests gated (partial new run: %v)\n", bullet, g.Tests, g.BaseTests, g.Partial)
	}
	if g.Tests == 0 {
		return Fail, fmt.Errorf("no test is in both %s and %s: nothing to gate", names[0], names[1])
	}
	if err := g.CannotTellErr(); err != nil {
		return Blind, err
	}
	if g.Checked == 0 {
		return Fail, fmt.Errorf("none of the metrics in --max-regress %q could be checked (see the notes)", c.MaxRegress)
	}
	if c.Counters != nil && g.CountersChecked == 0 {
		return Fail, fmt.Errorf("none of the counter limits in --max-counter %q could be checked: %s has no port counters (see the notes)", c.MaxCounter, names[1])
	}
	counters := ""
	if c.Counters != nil {
		counters = fmt.Sprintf(", %d counter limits checked", g.CountersChecked)
	}
	if blind := g.Underpowered(); len(blind) > 0 {
		counters += fmt.Sprintf("; %d of them underpowered, see UNDERPOWERED above", len(blind))
	}
	fmt.Fprintf(w, "%sno regressions (%d tests, %d metrics checked%s)\n", bullet, g.Tests, g.Checked, counters)
	if c.RequirePower {
		if err := g.PowerErr(); err != nil {
			return Blind, err
		}
	}
	return Pass, nil
}

// runMesh is Files for mesh documents: a table per pair, and with c.Gate
// the pair-by-pair gate.
func runMesh(w io.Writer, ins []*result.Input, c Config) (Verdict, error) {
	docs, err := result.Meshes(ins)
	if err != nil {
		return Unreadable, err
	}
	if err := WriteMeshTables(w, docs, Names(c.Paths), c.Metrics, c.Unit, c.Width); err != nil || c.Gate == nil {
		return written(err)
	}
	g := GateMesh(docs[0], docs[1], c.Gate.Limits)
	for _, n := range g.Notes {
		io.WriteString(w, report.Note("note: "+n))
	}
	for _, f := range g.Failed {
		fmt.Fprintf(w, "REGRESSION pair %s: failed in the new run\n", f)
	}
	for _, r := range g.Regressions {
		fmt.Fprintf(w, "REGRESSION pair %s: %s\n", r.Pair, r.Format(c.Unit))
	}
	for _, r := range g.Fairness {
		fmt.Fprintf(w, "REGRESSION all-to-one fairness %s\n", r.Format())
	}
	return g.judge(w, [2]string{c.Paths[0], c.Paths[1]})
}

// judge is the mesh gate's verdict: a pair that regressed or failed, or
// an all-to-one test less fair, fails; so does no pair metric checked at
// all (names: the baseline's and the new run's). Else "no regressions" is
// written.
func (g *MeshGateReport) judge(w io.Writer, names [2]string) (Verdict, error) {
	if err := g.Err(); err != nil {
		return Fail, err
	}
	if g.Checked == 0 {
		return Fail, fmt.Errorf("no pair metric of %s could be checked against %s (see the notes)", names[1], names[0])
	}
	fmt.Fprintf(w, "no regressions (%d pairs, %d metrics checked)\n", g.Pairs, g.Checked)
	return Pass, nil
}

// Names labels the files at paths for the tables' columns: the base name
// ("stdin" for -), or the path as given where base names collide, with
// "#N" added for a repeated path.
func Names(paths []string) []string {
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
