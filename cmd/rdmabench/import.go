package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
)

// importLong is the description of 'rdmabench import' (its help and man page).
const importLong = `Reads what perftest printed (ib_send_lat, ib_write_bw and the other six tools; stdout
and stderr as saved, perftest 6.x's layout and the newer MiB/sec one) and writes it
as an rdmabench result document, so that compare, report and plot read perftest's
figures beside rdmabench's. Each table row becomes one result; the document says
tool "perftest", its version (--perftest-version, else a "Version:" line in the
file), and in each result's timed_interval what perftest timed: latency as the time
between consecutive posts (RTT/2 for send and write, its 2 largest samples dropped,
t_typical as p50), bandwidth as the first post to the last completion. perftest's
MB/sec is 2^20 bytes/s, as perftest computes it.

A row with inf or nan (perftest's clock calibration failed), or a file without a
result table, is exit 8, the line named. --show prints one thing instead of the
document, for scripts: one line each, in order, for each file in turn (an empty
line for what a file lacks, and exit 8): row (the first result row's fields), tables
(how many table headers it printed), table-header (the table's header line as
printed), labels (the test box's title and labels, " | " between), setting:LABEL
(the first word of a box setting, e.g. 'setting:TX depth'), column:KEY (the first
row's figure in a column: bytes, iterations, t_min, t_max, t_typical, t_avg,
t_stdev, p99, p99.9, tps, bw_peak, bw_avg, msg_rate).`

// cmdImport is 'rdmabench import perftest FILE...'.
func cmdImport(fs *flag.FlagSet) action {
	tool := fs.String("tool", "", "the perftest tool that printed the files, e.g. ib_write_bw (default: from the test box's title)")
	ver := fs.String("perftest-version", "", "perftest's version to record (default: the file's 'Version:' line, else unknown)")
	out := fs.StringP("json", "o", "-", "write the document to FILE (- for stdout)")
	show := fs.StringArray("show", nil, "print one thing instead of the document: row, tables, table-header, labels, setting:LABEL, column:KEY "+
		"(repeatable: one line each, in order, for each file)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) == 0 || args[0] != "perftest" {
			return usageError{errors.New("import needs a source and files: rdmabench import perftest FILE...")}
		}
		files := args[1:]
		if len(files) == 0 {
			return usageError{errors.New("import perftest needs one or more files of perftest's output")}
		}
		for _, what := range *show {
			if !showable(what) {
				return usageError{fmt.Errorf("--show %q unknown; valid: row, tables, table-header, labels, setting:LABEL, column:KEY", what)}
			}
		}
		if *tool != "" {
			if _, ok := perftest.Tools[*tool]; !ok {
				return usageError{fmt.Errorf("--tool %q unknown; valid: ib_{send,write,read,atomic}_{lat,bw}", *tool)}
			}
		}
		if len(*show) > 0 {
			return showFiles(stdout, files, *show)
		}
		var doc *result.Document
		for _, f := range files {
			b, err := result.ReadInput(f)
			if err != nil {
				return inputError{err}
			}
			p, err := perftest.ParsePrinted(b)
			if err != nil {
				return inputError{fmt.Errorf("%s: %w", f, err)}
			}
			d, err := perftest.Import(p, f, perftest.ImportOptions{Tool: *tool, Version: *ver})
			if err != nil {
				return inputError{err}
			}
			if doc == nil {
				doc = d
			} else {
				doc.Results = append(doc.Results, d.Results...)
				doc.Warnings = append(doc.Warnings, d.Warnings...)
			}
		}
		if err := doc.Check(); err != nil {
			return inputError{err}
		}
		if *out == "-" {
			return result.WriteJSONFile("-", doc)
		}
		if err := result.WriteJSONFile(*out, doc); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// showFiles is --show: for each file in turn, one line per item of
// show, an empty one for what the file lacks (the first such failure is
// the error), so that every line keeps its place.
func showFiles(w io.Writer, files, show []string) error {
	var first error
	for _, f := range files {
		b, err := result.ReadInput(f)
		var p *perftest.Printed
		if err == nil {
			p, err = perftest.ParsePrinted(b)
			if err != nil {
				err = fmt.Errorf("%s: %w", f, err)
			}
		}
		for _, what := range show {
			e := err
			if e == nil {
				e = showPrinted(w, p, f, what)
			} else {
				e = inputError{e}
			}
			if e != nil {
				fmt.Fprintln(w)
				first = cmp.Or(first, e)
			}
		}
	}
	return first
}

// showPrinted is --show: one thing of p, for scripts.
func showPrinted(w io.Writer, p *perftest.Printed, file, what string) error {
	needRow := func() error {
		if len(p.Rows) == 0 {
			return inputError{fmt.Errorf("%s: %w", file, perftest.ErrNoTable)}
		}
		return nil
	}
	switch {
	case what == "row":
		if err := needRow(); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w, strings.Join(p.Rows[0].Fields, " "))
		return err
	case what == "tables":
		_, err := fmt.Fprintln(w, p.Tables)
		return err
	case what == "table-header":
		if p.HeaderLine == "" {
			return inputError{fmt.Errorf("%s: %w", file, perftest.ErrNoTable)}
		}
		_, err := fmt.Fprintln(w, p.HeaderLine)
		return err
	case what == "labels":
		if p.Title == "" {
			return inputError{fmt.Errorf("%s: no perftest test box", file)}
		}
		l := []string{"title:" + p.Title}
		for _, s := range p.Header {
			l = append(l, s.Label)
		}
		_, err := fmt.Fprintln(w, strings.Join(l, " | "))
		return err
	case strings.HasPrefix(what, "setting:"):
		v, ok := p.Setting(strings.TrimPrefix(what, "setting:"))
		if !ok {
			return inputError{fmt.Errorf("%s: no %q in perftest's test box", file, strings.TrimPrefix(what, "setting:"))}
		}
		if f := strings.Fields(v); len(f) > 0 {
			v = f[0]
		}
		_, err := fmt.Fprintln(w, v)
		return err
	case strings.HasPrefix(what, "column:"):
		if err := needRow(); err != nil {
			return err
		}
		k := strings.TrimPrefix(what, "column:")
		i := p.Column(k)
		if i < 0 {
			return inputError{fmt.Errorf("%s: no column %q in the table (it has %s)", file, k, strings.Join(p.Columns, ", "))}
		}
		_, err := fmt.Fprintln(w, p.Rows[0].Fields[i])
		return err
	}
	return usageError{fmt.Errorf("--show %q unknown; valid: row, tables, table-header, labels, setting:LABEL, column:KEY", what)}
}

// importShows are what --show prints: whole words, and the two prefixes
// that take a name (setting:LABEL, column:KEY).
var importShows = []string{"row", "tables", "table-header", "labels", "setting:", "column:"}

// showable reports whether --show knows what.
func showable(what string) bool {
	for _, w := range importShows {
		if what == w && !strings.HasSuffix(w, ":") || strings.HasSuffix(w, ":") && strings.HasPrefix(what, w) {
			return true
		}
	}
	return false
}
