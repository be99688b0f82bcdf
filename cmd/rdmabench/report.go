package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/fabric"
	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// reportLong is the description of 'rdmabench report' (its help and man page).
const reportLong = `Compares fabrics: one column per fabric (RoCE, iWARP, InfiniBand, TCP), named
from each file's environment (transport, device, driver; the host when the
files come from several), one row per op, mode and message size. Files of one
fabric (a latency run and a bandwidth run) share a column. Latency and
bandwidth show their ratio to the TCP baseline ('rdmabench loopback
--transport tcp') of the same mode and size; TCP has only SEND, so SEND, WRITE
and READ rows all take TCP's SEND as baseline. Rows whose results differ in
a setting (RTT against RTT/2, inline, open loop, QP type, MR mode, QP count)
are flagged, and the flags explained under the table.`

// cmdReport is 'rdmabench report': the fabric comparison.
func cmdReport(fs *flag.FlagSet) action {
	format := fs.String("format", fabric.FormatText, "output: text (aligned, perftest style) or markdown (GitHub tables)")
	unit := fs.String("unit", result.UnitMiB, "bandwidth unit: MiB (MiB/sec, perftest's), MB (10^6 B/s), Gb (Gb/sec)")
	wide := addWideFlag(fs)
	plotPath := fs.String("plot", "", "also draw p50 and p99.9 latency per fabric against message size to FILE.svg or FILE.png")
	tsv := fs.Bool("tsv", false, "instead of the comparison, print each file's results as tab-separated lines after a header line: "+
		strings.Join(report.ResultsTSVColumns, ", ")+" (latency ns, n/a with too few samples; bandwidth MiB/s; an empty field: not in the file)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if *tsv {
			return reportTSV(fs, stdout)
		}
		if !slices.Contains(fabric.Formats, *format) {
			return usageError{fmt.Errorf("format %q unknown; valid: %s", *format, strings.Join(fabric.Formats, ", "))}
		}
		if err := checkUnit(*unit); err != nil {
			return err
		}
		if *plotPath != "" {
			if _, err := plot.Format(*plotPath); err != nil {
				return usageError{err}
			}
		}
		paths := fs.Args()
		if len(paths) == 0 {
			return usageError{errors.New("report needs one or more result files (rdmabench loopback/run --json FILE)")}
		}
		if countStdin(paths) > 1 {
			return usageError{errors.New("report can read stdin (-) only once")}
		}
		docs, err := result.ReadResults(paths)
		if err != nil {
			return err
		}
		rep := fabric.New(docs)
		if *format == fabric.FormatMarkdown {
			err = rep.WriteMarkdown(stdout, *unit)
		} else {
			err = rep.WriteText(stdout, *unit, tableWidth(*wide))
		}
		if err != nil || *plotPath == "" {
			return err
		}
		if err := rep.Plot(*plotPath); err != nil {
			if errors.Is(err, plot.ErrNothingToPlot) {
				return fmt.Errorf("--plot %s: %w (the files need latency results)", *plotPath, err)
			}
			return err
		}
		for _, g := range rep.PlotGaps() {
			fmt.Fprintf(stderr, "note: --plot: %s\n", g)
		}
		fmt.Fprintf(stderr, "wrote %s\n", *plotPath)
		return nil
	}
}

// reportTSV is 'rdmabench report --tsv FILE...': the files' results, one
// tab-separated line each, for scripts (scripts/hw-check.sh) that need no
// JSON reader of their own.
func reportTSV(fs *flag.FlagSet, stdout io.Writer) error {
	for _, f := range []string{"format", "unit", "plot"} {
		if fs.Changed(f) {
			return usageError{fmt.Errorf("--tsv prints the results as they are: --%s does not apply", f)}
		}
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usageError{errors.New("report --tsv needs one or more result files (rdmabench loopback/run --json FILE)")}
	}
	if countStdin(paths) > 1 {
		return usageError{errors.New("report can read stdin (-) only once")}
	}
	docs, err := result.ReadResults(paths) // every file read before a line is printed
	if err != nil {
		return err
	}
	if err := report.WriteTSVHeader(stdout, report.ResultsTSVColumns); err != nil {
		return err
	}
	for i, d := range docs {
		if err := report.WriteResultsTSV(stdout, paths[i], d); err != nil {
			return err
		}
	}
	return nil
}
