package perftest

// Reading perftest's output: the one parser every script uses (through
// `rdmabench import perftest`), of what perftest 6.x and later print. The
// layouts it reads are those format.go writes, and those of newer perftest
// releases (the bandwidth unit printed as MiB/sec since 2024).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Printed is one perftest program's output, as printed: the test box, the
// table and, with -H, the samples. Values keep perftest's units (µs,
// the bandwidth unit of BWUnit, Mpps).
type Printed struct {
	// Title is the test box's title, such as "Send Latency Test" or
	// "RDMA_Write BW Test" ("" when the output has no box).
	Title string
	// Header holds the box's settings in printed order ("TX depth" =
	// "128", "Mtu" = "4096[B]").
	Header []Setting
	// Columns are the table's column keys (ColumnKey), in printed order;
	// Labels the same columns as printed ("t_typical[usec]").
	Columns []string
	Labels  []string
	// HeaderLine is the table header as printed (no line end; trailing
	// blanks kept), the last
	// when there are several; Tables counts them.
	HeaderLine string
	Tables     int
	// BWUnit is the bandwidth columns' unit as printed: "MB/sec",
	// "MiB/sec" or "Gb/sec" ("" for latency tables).
	BWUnit string
	// Rows are the table's result rows: one per size (-a), one per
	// interval (--run_infinitely).
	Rows []Row
	// Samples are -H's "#, usec" list, µs, in printed order.
	Samples []float64
	// Values are --output's bare numbers (no table), one per result.
	Values []float64
	// Server is set when the output is a server's (it printed perftest's
	// "Waiting for client to connect" banner).
	Server bool
	// Version is perftest's version when the output holds its
	// "Version: X" line (ib_send_lat -V), else "".
	Version string
}

// Setting is one "Label : Value" of perftest's test box.
type Setting struct{ Label, Value string }

// Row is one result row: its fields as printed and as numbers.
type Row struct {
	Line   string // as printed, without the line end
	Fields []string
	Values []float64
}

// The column keys of perftest's tables (ColumnKey).
const (
	ColBytes      = "bytes"
	ColIterations = "iterations"
	ColMin        = "t_min"
	ColMax        = "t_max"
	ColTypical    = "t_typical"
	ColAvg        = "t_avg"
	ColStdev      = "t_stdev"
	ColP99        = "p99"
	ColP999       = "p99.9"
	ColTPS        = "tps"
	ColBWPeak     = "bw_peak"
	ColBWAvg      = "bw_avg"
	ColMsgRate    = "msg_rate"
)

// ParseError is output that perftest's layout does not explain: a result
// row with a field that is not a finite number (perftest prints inf or nan
// when its CPU clock calibration fails), or no table where one is needed.
type ParseError struct {
	Line int    // 1-based; 0 when it concerns the whole output
	Text string // the line, trimmed
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "perftest output: " + e.Err.Error()
	}
	return fmt.Sprintf("perftest output line %d %q: %v", e.Line, e.Text, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// columnRE splits a table header into its columns: the percentile and
// bandwidth labels hold a space, the others do not.
var columnRE = regexp.MustCompile(`[0-9.]+% percentile\[[^\]]*\]|BW [a-z]+\[[^\]]*\]|tps average|\S+`)

// ColumnKey is the key of a printed column label: "#bytes" is "bytes",
// "t_typical[usec]" "t_typical", "99.9% percentile[usec]" "p99.9",
// "BW average[MB/sec]" "bw_avg", "MsgRate[Mpps]" "msg_rate".
func ColumnKey(label string) string {
	l := strings.TrimPrefix(label, "#")
	if i := strings.IndexByte(l, '['); i >= 0 {
		l = l[:i]
	}
	switch {
	case strings.HasSuffix(l, "% percentile"):
		return "p" + strings.TrimSuffix(l, "% percentile")
	case l == "BW peak":
		return ColBWPeak
	case l == "BW average":
		return ColBWAvg
	case l == "MsgRate":
		return ColMsgRate
	case l == "tps average":
		return ColTPS
	}
	return l
}

// isDashes reports a perftest separator line (RESULT_LINE).
func isDashes(s string) bool { return len(s) >= 10 && strings.Trim(s, "-") == "" }

// ParsePrinted reads one perftest program's output (stdout and stderr
// together, as the scripts keep them). Lines it does not know (addresses,
// warnings, banners) are skipped; a result row that holds a field that is
// not a finite number is an error.
func ParsePrinted(b []byte) (*Printed, error) {
	p := &Printed{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	const (
		none = iota
		afterDashes
		inBox
	)
	box, n := none, 0
	inTable, inSamples := false, false
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		line := strings.TrimSpace(raw)
		switch {
		case isDashes(line):
			if box == inBox {
				box = none
			} else {
				box = afterDashes
			}
			inSamples = false
			continue
		case box == afterDashes && p.Title == "" && strings.HasPrefix(raw, "                    ") && line != "" && line[0] >= 'A' && line[0] <= 'Z':
			p.Title, box = line, inBox
			continue
		case box == inBox:
			for _, part := range strings.Split(raw, "\t\t") {
				k, v, ok := strings.Cut(part, ":")
				if ok {
					p.Header = append(p.Header, Setting{strings.TrimSpace(k), strings.TrimSpace(v)})
				}
			}
			continue
		}
		box = none
		switch {
		case strings.HasPrefix(line, "#bytes"):
			labels := columnRE.FindAllString(line, -1)
			var cols []string
			unit := ""
			for _, l := range labels {
				k := ColumnKey(l)
				cols = append(cols, k)
				if k == ColBWAvg {
					unit = l[strings.IndexByte(l, '[')+1 : len(l)-1]
				}
			}
			if len(p.Rows) > 0 && !slices.Equal(cols, p.Columns) {
				// the rows read so far are under the first header: one document, one table
				return nil, &ParseError{n, line, fmt.Errorf("%w: a second table header (%s) whose columns differ from the first's (%s)",
					ErrNotARow, strings.Join(labels, " "), strings.Join(p.Labels, " "))}
			}
			p.HeaderLine = strings.TrimRight(sc.Text(), "\r") // as printed, trailing blanks too
			p.Tables++
			p.Labels, p.Columns, p.BWUnit = labels, cols, unit
			inTable, inSamples = true, false
		case line == "#, usec":
			inSamples = true
		case strings.Contains(line, "Waiting for client to connect"):
			p.Server = true
		case strings.HasPrefix(line, "Version:"):
			p.Version = strings.TrimSpace(strings.TrimPrefix(line, "Version:"))
		case inSamples:
			i, v, ok := strings.Cut(line, ",")
			if _, err := strconv.Atoi(strings.TrimSpace(i)); !ok || err != nil {
				inSamples = false
				continue
			}
			f, err := finite(strings.TrimSpace(v))
			if err != nil {
				return nil, &ParseError{n, line, fmt.Errorf("sample: %w", err)}
			}
			p.Samples = append(p.Samples, f)
		case inTable:
			fields := strings.Fields(line)
			if len(fields) == 0 || !allDigits(fields[0]) {
				continue
			}
			if len(fields) != len(p.Columns) { // a row cut short or run on: refused, not guessed at
				return nil, &ParseError{n, line, fmt.Errorf("%w: %d fields under a header of %d columns (%s)", ErrNotARow, len(fields), len(p.Columns), strings.Join(p.Labels, " "))}
			}
			r := Row{Line: raw, Fields: fields}
			for i, f := range fields {
				v, err := finite(f)
				if err != nil {
					return nil, &ParseError{n, line, fmt.Errorf("column %q: %w", p.Labels[i], err)}
				}
				r.Values = append(r.Values, v)
			}
			p.Rows = append(p.Rows, r)
		case p.Columns == nil && line != "" && len(strings.Fields(line)) == 1:
			if v, err := strconv.ParseFloat(line, 64); err == nil {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, &ParseError{n, line, fmt.Errorf("%q is not a finite number", line)}
				}
				p.Values = append(p.Values, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{Err: err}
	}
	return p, nil
}

// ErrNotARow is what a line of a result table that is not one of
// perftest's rows (its fields do not match the header's columns) wraps.
var ErrNotARow = errors.New("not a perftest result row")

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// finite parses s as a finite number: perftest prints inf, -nan and the
// like when its clock calibration failed.
func finite(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// Setting returns the value of the test box's label ("TX depth"), and
// whether the box has it.
func (p *Printed) Setting(label string) (string, bool) {
	for _, s := range p.Header {
		if s.Label == label {
			return s.Value, true
		}
	}
	return "", false
}

// SettingInt returns the leading whole number of label's value ("4096[B]"
// is 4096), and whether there is one.
func (p *Printed) SettingInt(label string) (int, bool) {
	v, ok := p.Setting(label)
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(v[:i])
	return n, err == nil
}

// Column returns the index of the column key (ColTypical ...), or -1.
func (p *Printed) Column(key string) int {
	for i, c := range p.Columns {
		if c == key {
			return i
		}
	}
	return -1
}

// Value returns row r's figure in column key, and whether the table has
// that column.
func (p *Printed) Value(r Row, key string) (float64, bool) {
	i := p.Column(key)
	if i < 0 || i >= len(r.Values) {
		return 0, false
	}
	return r.Values[i], true
}
