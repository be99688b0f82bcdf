package report

import (
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Options are how WriteDocument prints a document.
type Options struct {
	Unit  string // bandwidth unit: result.UnitMiB, UnitMB or UnitGb
	Sides bool   // each side of a bidirectional test under its sum (--report-both)
	CI    bool   // the percentiles' confidence intervals after the latency table (--ci)
	Width int    // the columns the tables fit (Width); 0: every column (--wide)
}

// WriteDocument writes doc as run and loopback print it: the header, the
// latency table (with o.CI, the percentiles' intervals after it), the
// bandwidth table, the repeated runs, the load sweeps, the connections,
// the port counters that moved and the warnings.
func WriteDocument(w io.Writer, doc *result.Document, o Options) error {
	var b strings.Builder
	if err := WriteHeader(&b, doc); err != nil {
		return err
	}
	var lat, bw []result.Result
	for _, r := range doc.Results {
		if r.Mode == result.ModeLat {
			lat = append(lat, r)
		} else {
			bw = append(bw, r)
		}
	}
	if len(lat) > 0 {
		if err := WriteLatencyTable(&b, lat, o.Width); err != nil {
			return err
		}
		if o.CI {
			if err := WriteCITable(&b, lat, o.Width); err != nil {
				return err
			}
		}
	}
	if len(bw) > 0 {
		if err := WriteBandwidthTableSides(&b, bw, o.Unit, o.Sides, o.Width); err != nil {
			return err
		}
	}
	for _, f := range []func(io.Writer) error{
		func(w io.Writer) error { return WriteRepeatTable(w, doc.Results, o.Unit) },
		func(w io.Writer) error { return WriteLoadSweeps(w, doc.LoadSweeps, o.Unit) },
		func(w io.Writer) error { return WriteConnectionTable(w, doc.Results) },
		func(w io.Writer) error { return WriteCounterLines(w, doc.Results) },
	} {
		if err := f(&b); err != nil {
			return err
		}
	}
	for _, s := range doc.Warnings {
		b.WriteString(Wrap("WARNING: "+s, Width, "  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
