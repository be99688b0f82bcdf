package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/cliffs"
	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/fabric"
	"github.com/rdmabench/rdmabench/bench/isolation"
	"github.com/rdmabench/rdmabench/bench/mesh"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/clock"
)

// The values of the enum-valued flags, from the packages that own each
// vocabulary: shell completion offers them (registerValues) and
// docs/flags.md lists them (gen-docs), so both say what the code takes.

// flagValues are the values flag name of command cmd takes, and whether
// it takes a comma-separated list of them; nil when it is no enum.
func flagValues(cmd, name string) (values []string, list bool) {
	switch name {
	case "op":
		return append(opNames(), "all"), true
	case "mode":
		return result.Modes, true
	case "qp-type":
		return result.QPTypes, false
	case "unit":
		return result.Units, false
	case "transport":
		return result.Transports, false
	case "schedule":
		return result.Schedules, false
	case "mr-mode":
		return result.MRModes, false
	case "load-op":
		return []string{result.OpWrite, result.OpRead}, false
	case "clock":
		return clock.Modes, false
	case "access":
		return spec.AccessArgs, false
	case "inline-size":
		return []string{"auto", spec.InlinePerftest}, false
	case "comp-vector":
		return []string{"spread"}, false
	case "pattern":
		return mesh.Patterns, false
	case "attackers":
		return append(isolation.Names(), "all"), true
	case "axis":
		names := make([]string, len(cliffs.AxisTable))
		for i, a := range cliffs.AxisTable {
			names[i] = a.Arg()
		}
		return names, false
	case "metric":
		return plot.Metrics, false
	case "metrics":
		if cmd == "compare" {
			return compare.Metrics(), true
		}
	case "figure":
		if cmd == "cliffs" {
			return result.FigureNames(), false
		}
	case "show":
		if cmd == "import" {
			return importShows, false
		}
	case "kind":
		return plot.KindArgs(), false
	case "tool":
		if cmd == "import" {
			return slices.Sorted(maps.Keys(perftest.Tools)), false
		}
	case "format":
		switch cmd {
		case "compare":
			return []string{compare.FormatTable, compare.FormatMarkdown, compare.FormatGobench}, false
		case "report":
			return fabric.Formats, false
		}
	}
	return nil, false
}

// checkUnit refuses a bandwidth unit outside result.Units (--unit).
func checkUnit(unit string) error {
	if !slices.Contains(result.Units, unit) {
		return usageError{fmt.Errorf("unit %q unknown; valid: %s", unit, strings.Join(result.Units, ", "))}
	}
	return nil
}

// opNames are the ops of bench/spec's op table, in its order.
func opNames() []string {
	var names []string
	for _, o := range spec.Ops() {
		names = append(names, o.Name)
	}
	return names
}

// importSources are the first operands of 'rdmabench import'.
var importSources = []string{"perftest"}

// registerValues registers the completion of every enum-valued flag of c.
func registerValues(c *cobra.Command) {
	for _, name := range enumFlagNames(c) {
		values, list := flagValues(c.Name(), name)
		if err := c.RegisterFlagCompletionFunc(name, completeValues(values, list)); err != nil {
			panic(err) // a flag registered twice: a programming error
		}
	}
}

// enumFlagNames are c's local flags that take values of a vocabulary.
func enumFlagNames(c *cobra.Command) []string {
	var names []string
	c.Flags().VisitAll(func(f *flag.Flag) {
		if v, _ := flagValues(c.Name(), f.Name); v != nil {
			names = append(names, f.Name)
		}
	})
	return names
}

// completeValues completes one of values, or with list the last element
// of a comma-separated list.
func completeValues(values []string, list bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix, last := "", toComplete
		dir := cobra.ShellCompDirectiveNoFileComp
		if list {
			if i := strings.LastIndex(toComplete, ","); i >= 0 {
				prefix, last = toComplete[:i+1], toComplete[i+1:]
			}
		}
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, last) {
				out = append(out, prefix+v)
			}
		}
		if len(out) == 1 && strings.HasSuffix(out[0], ":") {
			dir |= cobra.ShellCompDirectiveNoSpace // stride: wants its step
		}
		return out, dir
	}
}

// completeImport completes 'rdmabench import': the source, then files.
func completeImport(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault // perftest's output files
	}
	var out []string
	for _, s := range importSources {
		if strings.HasPrefix(s, toComplete) {
			out = append(out, s)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
