package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// ResultsTSVColumns are the columns of WriteResultsTSV, in order: what a
// shell script needs of a result file without reading its JSON.
var ResultsTSVColumns = []string{"file", "op", "mode", "size_bytes", "iterations", "p50_ns", "p99_ns", "mib_per_s", "mpps",
	"device", "port", "gid_index", "transport", "rdma_core_version", "kernel_clocksource"}

// WriteResultsTSV writes the results of doc, read from file, as
// tab-separated lines of ResultsTSVColumns (no header: see
// WriteTSVHeader): one line per result, latencies as latency_ns has them
// (ns; "n/a" when too few samples), bandwidth in MiB/s (2^20 bytes/s)
// and million messages per second, and the client's environment. An
// empty field is a value the document does not have; tabs and line
// breaks inside values become spaces.
func WriteResultsTSV(w io.Writer, file string, doc *result.Document) error {
	e := doc.Env
	for _, r := range doc.Results {
		row := []string{file, r.Op, r.Mode, strconv.Itoa(r.SizeBytes), strconv.FormatInt(r.Iterations, 10),
			tsvNanos(r.Latency.P50), tsvNanos(r.Latency.P99), tsvFloat(r.Bandwidth.MiBPerSec), tsvFloat(r.Bandwidth.Mpps),
			e.Device, strconv.Itoa(e.Port), strconv.Itoa(e.GIDIndex), e.Transport, e.RDMACoreVersion, e.KernelClocksource}
		if err := WriteTSVRow(w, row); err != nil {
			return err
		}
	}
	return nil
}

// WriteTSVHeader writes the column names as one tab-separated line.
func WriteTSVHeader(w io.Writer, columns []string) error { return WriteTSVRow(w, columns) }

// WriteTSVRow writes fields as one tab-separated line; tabs and line
// breaks inside a field become spaces.
func WriteTSVRow(w io.Writer, fields []string) error {
	clean := make([]string, len(fields))
	for i, f := range fields {
		clean[i] = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(f)
	}
	_, err := fmt.Fprintln(w, strings.Join(clean, "\t"))
	return err
}

func tsvNanos(n result.Nanos) string {
	if !n.OK {
		return "n/a"
	}
	return tsvFloat(n.NS)
}

func tsvFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
