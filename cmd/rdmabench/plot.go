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

// plotLong is the description of 'rdmabench plot' (its help and man page).
const plotLong = `Draws the results of one or more 'rdmabench --json' files:
  percentile    latency against percentile (HdrHistogram style; runs overlay)
  cdf           cumulative fraction against latency
  size-latency  p50 and p99 (or --metric) latency against message size
  size-bw       bandwidth against message size
  heatmap       one mesh document ('rdmabench mesh --json'): the N×N map of one
                test, rows the client, columns the server, axes named by host;
                p99 (or --metric) for a latency test, bandwidth for a bw test
                (pick the test with --op, --mode, --size; default: the first lat test)
  cliffs        one cliffs document ('rdmabench cliffs --json'): the figure along
                the axis, the runs' median, min and max, and each knee
  timeline      one test's intervals (-D/--duration or --interval): p50 and p99
                per interval above, the port counters that moved in each
                interval below (both sides; --counters, default: the trouble
                counters such as retransmissions and out-of-sequence), on one
                time axis (pick the test with --op, --mode, --size)
--kind auto draws percentile for several files or one message size, and the
size plots for a size sweep; when several kinds apply, -o x.svg writes
x-percentile.svg, x-size-latency.svg, ... Percentile and cdf plots default to
lat mode and the smallest size. Latency is as in latency_ns (RTT/2 for SEND
and WRITE, RTT for READ).`

// cmdPlot is 'rdmabench plot'.
func cmdPlot(fs *flag.FlagSet) action {
	out := fs.StringP("output", "o", "", "image to write: FILE.svg or FILE.png (required)")
	kind := fs.String("kind", plot.KindAuto, "plot: auto, percentile, cdf, size-latency, size-bw, load (latency against offered load, from --load-sweep), heatmap (mesh documents), cliffs (a cliffs document), timeline (one test's intervals: latency and port counters over time)")
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
		if !slices.Contains(plot.KindNames, *kind) && *kind != plot.KindHeatmap && *kind != plot.KindCliffs {
			return usageError{fmt.Errorf("--kind %q unknown; valid: %s, %s, %s", *kind, strings.Join(plot.KindNames, ", "), plot.KindHeatmap, plot.KindCliffs)}
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
		ins := result.OpenAll(paths) // each read once, its kind named
		if *kind == plot.KindCliffs || (len(ins) == 1 && ins[0].Kind == result.KindCliffs) {
			return plotCliffs(ins, *kind, *out, stdout)
		}
		if *kind == plot.KindHeatmap || (len(ins) == 1 && ins[0].Kind == result.KindMesh) {
			return plotHeatmap(ins, *kind, sel, *out, stdout)
		}
		docs, err := result.Results(ins)
		if err != nil {
			return err
		}
		written, err := plot.Draw(docs, plot.Labels(paths), *kind, sel, *out)
		for _, w := range written {
			fmt.Fprintf(stdout, "wrote %s\n", w)
		}
		if errors.Is(err, plot.ErrNothingToPlot) {
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

// plotHeatmap draws one mesh document's heatmap.
func plotHeatmap(ins []*result.Input, kind string, sel plot.Selection, out string, stdout io.Writer) error {
	if len(ins) != 1 {
		return usageError{fmt.Errorf("--kind heatmap draws one mesh document (got %d files)", len(ins))}
	}
	if kind != plot.KindHeatmap && kind != plot.KindAuto {
		return usageError{fmt.Errorf("%s is a mesh document: its plot is --kind heatmap, not %s", ins[0].Path, kind)}
	}
	doc, err := ins[0].Mesh()
	if err != nil {
		return err
	}
	err = plot.Heatmap(doc, sel, out)
	if errors.Is(err, plot.ErrNothingToPlot) {
		return usageError{err}
	}
	if err == nil {
		fmt.Fprintf(stdout, "wrote %s\n", out)
	}
	return err
}
