package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/result"
)

// perftest's spellings of flags on run, loopback, server and mesh, so
// that a perftest user's command line works (docs/perftest-flags.md).

// perftestJSONFile is the file perftest's --out_json writes without
// --out_json_file.
const perftestJSONFile = "perftest_out.json"

// perftestAllSizes are perftest -a's sizes: 2 B to 2^23 B.
const perftestAllSizes = "2-8M"

// perftestNames maps perftest's long flag names to rdmabench's: an
// underscore reads as a dash (--report_gbits, --out_json, --post_list,
// --inline_size, --disable_pcie_relaxed, --pkey_index), and --connection,
// --all, --CPU-freq, --eq_num (or --vector) and --data_validation name
// --qp-type, --all-sizes, --cpu-freq, --comp-vector and --verify.
func perftestNames(_ *flag.FlagSet, name string) flag.NormalizedName {
	name = strings.ReplaceAll(name, "_", "-")
	switch name {
	case "connection":
		name = "qp-type"
	case "all":
		name = "all-sizes"
	case "CPU-freq":
		name = "cpu-freq"
	case "use-srq":
		name = "srq"
	case "report-histogram":
		name = "histogram"
	case "eq-num", "vector":
		name = "comp-vector"
	case "data-validation":
		name = "verify"
	}
	return flag.NormalizedName(name)
}

// perftestFlags are the perftest flags of run and loopback that have no
// rdmabench flag of the same meaning: each sets one (apply).
type perftestFlags struct {
	all         *bool
	gbits       *bool
	histogram   *bool
	outJSON     *bool
	outJSONFile *string
}

// addPerftestFlags defines them on fs.
func addPerftestFlags(fs *flag.FlagSet) *perftestFlags {
	p := &perftestFlags{
		all:       fs.BoolP("all-sizes", "a", false, "every power-of-two size from 2 B to 8 MiB, as --size "+perftestAllSizes+" (perftest -a)"),
		gbits:     fs.Bool("report-gbits", false, "bandwidth in Gb/sec, as --unit Gb (perftest --report_gbits)"),
		histogram: fs.BoolP("histogram", "H", false, "after the tables, print each latency test's full percentile distribution, HdrHistogram style, in usec (perftest -H)"),
		outJSON:   fs.Bool("out-json", false, "write the result document to "+perftestJSONFile+", as --json "+perftestJSONFile+" (perftest --out_json)"),
		outJSONFile: fs.String("out-json-file", "", "with --out-json: write the result document to this file instead of "+perftestJSONFile+
			" (perftest --out_json_file)"),
	}
	perftestServerFlags(fs)
	return p
}

// apply sets the rdmabench flags the perftest flags stand for: --size,
// --unit and --json; a contradiction is a usage error.
func (p *perftestFlags) apply(fs *flag.FlagSet, tf *testFlags, unit, jsonPath *string) error {
	if *p.all {
		if fs.Changed("size") {
			return usageError{errors.New("-a (all sizes, " + perftestAllSizes + ") and --size contradict: give one")}
		}
		*tf.sizes = perftestAllSizes
	}
	if *p.gbits {
		if fs.Changed("unit") && *unit != result.UnitGb {
			return usageError{fmt.Errorf("--report_gbits and --unit %s contradict", *unit)}
		}
		*unit = result.UnitGb
	}
	if fs.Changed("out-json-file") && !*p.outJSON {
		return usageError{errors.New("--out_json_file names the file of --out_json: add --out_json")}
	}
	if *p.outJSON {
		path := perftestJSONFile
		if *p.outJSONFile != "" {
			path = *p.outJSONFile
		}
		if fs.Changed("json") && *jsonPath != path {
			return usageError{fmt.Errorf("--out_json (%s) and --json %s contradict: give one", path, *jsonPath)}
		}
		*jsonPath = path
	}
	return nil
}

// writeHistograms prints each latency result's percentile distribution
// (-H): the .hgrm table of --hgrm, in usec of the reported latency.
func writeHistograms(w io.Writer, doc *result.Document) error {
	for _, r := range doc.Results {
		if r.Mode != result.ModeLat || r.Histogram == "" {
			continue
		}
		h, err := r.DecodeHistogram()
		if err != nil {
			return err
		}
		div := r.HistogramDivisor
		if div <= 0 {
			div = 1
		}
		fmt.Fprintf(w, "\n%s %s %dB: latency distribution (usec)\n", r.Op, r.Mode, r.SizeBytes)
		if err := h.WriteHGRM(w, 1000*div); err != nil {
			return err
		}
	}
	return nil
}

// secondsDuration is a duration flag that also takes a bare number of
// seconds, as perftest's -D 10 does: "10", "2.5", "10s", "500ms".
type secondsDuration time.Duration

func (d *secondsDuration) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f != f || f > float64(1<<62)/1e9 || f < -float64(1<<62)/1e9 {
			return fmt.Errorf("%q seconds out of range", s)
		}
		*d = secondsDuration(time.Duration(f * float64(time.Second)))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds (10) or a duration (10s, 500ms): %w", err)
	}
	*d = secondsDuration(v)
	return nil
}

func (d *secondsDuration) String() string {
	if *d == 0 {
		return "0" // pflag shows no default for "0"
	}
	return time.Duration(*d).String()
}

func (d *secondsDuration) Type() string { return "duration" }

// perftestServerFlags are the perftest spellings a server accepts
// (docs/perftest-flags.md): -F, which has no effect; run and
// loopback take it too.
func perftestServerFlags(fs *flag.FlagSet) {
	fs.BoolP("cpu-freq", "F", false, "accepted for perftest's -F (--CPU-freq); no effect: rdmabench always checks the CPU frequency governor and warns")
}
