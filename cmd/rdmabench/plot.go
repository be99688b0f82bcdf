package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// plotLong is the description of 'rdmabench plot' (its help and man
// page): the kinds from plot.KindTable.
func plotLong() string {
	var b strings.Builder
	b.WriteString("Draws the results of one or more 'rdmabench --json' files (--kind):\n")
	for _, k := range plot.KindTable {
		fmt.Fprintf(&b, "  %-13s %s\n", k.Name, k.Help)
	}
	b.WriteString(`When --kind auto finds several kinds that apply, -o x.svg writes
x-percentile.svg, x-size-latency.svg, ... and prints each file's name; give
--kind to write exactly the file -o names. Percentile and cdf plots default
to lat mode and the smallest size; heatmap and timeline draw the first test
that --op, --mode and --size select. Latency is as in latency_ns (RTT/2 for
SEND and WRITE, RTT for READ).`)
	return b.String()
}

// cmdPlot is 'rdmabench plot'.
func cmdPlot(fs *flag.FlagSet) action {
	out := fs.StringP("output", "o", "", "image to write: FILE.svg or FILE.png (required)")
	kind := fs.String("kind", plot.KindAuto, "plot: "+strings.Join(plot.KindArgs(), ", ")+" (see above)")
	ops := fs.String("op", "", "only these ops, e.g. send,read (default: all)")
	modes := fs.String("mode", "", "only these modes: lat, bw (default: per plot, see above)")
	sizes := fs.StringP("size", "s", "", "only these message sizes, e.g. 2,64,4K or 2-64K")
	metric := fs.String("metric", "", "size-latency statistic: "+strings.Join(plot.Metrics, ", ")+" (default: p50 and p99)")
	counters := fs.String("counters", "", "timeline: the port counters to draw, by their JSON names, e.g. out_of_seq_request,duplicate_request "+
		"(default: every trouble counter that moved)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() == 0 {
			return usageError{errors.New("plot needs at least one result file (rdmabench ... --json FILE)")}
		}
		if *out == "" {
			return usageError{errors.New("plot needs -o FILE.svg or -o FILE.png")}
		}
		if _, err := plot.Format(*out); err != nil {
			return usageError{err}
		}
		if !slices.Contains(plot.KindArgs(), *kind) {
			return usageError{fmt.Errorf("--kind %q unknown; valid: %s", *kind, strings.Join(plot.KindArgs(), ", "))}
		}
		var sel plot.Selection
		if *metric != "" {
			if !slices.Contains(plot.Metrics, *metric) {
				return usageError{fmt.Errorf("--metric %q unknown; valid: %s", *metric, strings.Join(plot.Metrics, ", "))}
			}
			sel.Metric = *metric
		}
		if *counters != "" {
			if *kind != plot.KindTimeline {
				return usageError{fmt.Errorf("--counters is for --kind timeline, not %s", *kind)}
			}
			for _, c := range strings.Split(*counters, ",") {
				if c = strings.TrimSpace(c); c == "" {
					return usageError{fmt.Errorf("--counters %q has an empty name", *counters)}
				}
				sel.Counters = append(sel.Counters, c)
			}
		}
		var err error
		if *ops != "" {
			if sel.Ops, err = spec.ParseList("op", *ops, result.Ops); err != nil {
				return usageError{err}
			}
		}
		if *modes != "" {
			if sel.Modes, err = spec.ParseList("mode", *modes, result.Modes); err != nil {
				return usageError{err}
			}
		}
		if *sizes != "" {
			if sel.Sizes, err = spec.ParseSizes(*sizes); err != nil {
				return usageError{err}
			}
		}
		paths := fs.Args()
		if n := countStdin(paths); n > 1 {
			return usageError{errors.New("plot can read stdin (-) only once")}
		}
		written, err := plot.Files(paths, *kind, sel, *out)
		for _, w := range written {
			fmt.Fprintf(stdout, "wrote %s\n", w)
		}
		var pu plot.UsageError
		if errors.As(err, &pu) {
			return usageError{err}
		}
		return err
	}
}

func countStdin(paths []string) int {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	return n
}
