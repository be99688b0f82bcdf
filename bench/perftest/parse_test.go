package perftest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func readPrinted(t *testing.T, name string) *Printed {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePrinted(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// TestParsePrinted: every recorded perftest 6.06 output and the newer
// layout parse into their title, settings, columns and rows.
func TestParsePrinted(t *testing.T) {
	cases := []struct {
		file    string
		title   string
		cols    int
		rows    int
		samples int
		server  bool
		unit    string
		first   string // the first row's fields, one space apart
		setting [2]string
	}{
		{"perftest-6.06/send_lat.client.txt", "Send Latency Test", 9, 1, 0, false, "", "2 1000 12.86 125957.66 14.19 1743.00 3244.36 17948.33 125957.66", [2]string{"TX depth", "1"}},
		{"perftest-6.06/send_lat.server.txt", "Send Latency Test", 9, 1, 0, true, "", "2 1000 12.93 129803.72 14.24 1734.43 3346.07 18931.63 129803.72", [2]string{"RX depth", "512"}},
		{"perftest-6.06/read_lat.server.txt", "RDMA_Read Latency Test", 0, 0, 0, true, "", "", [2]string{"Outstand reads", "128"}},
		{"perftest-6.06/atomic_lat.client.txt", "Atomic FETCH_AND_ADD Latency Test", 9, 1, 0, false, "", "8 1000 19.20 3858.74 19.58 41.81 182.26 549.60 3858.74", [2]string{"rdma_cm QPs", "OFF"}},
		{"perftest-6.06/send_lat_D.client.txt", "Send Latency Test", 4, 1, 0, false, "", "2 12241 81.99 6098.31", [2]string{"Mtu", "4096[B]"}},
		{"perftest-6.06/send_lat_H.client.txt", "Send Latency Test", 9, 1, 17, false, "", "2 20 13.29 252.80 13.96 18.92 13.21 252.80 252.80", [2]string{"GID index", "1"}},
		{"perftest-6.06/write_bw.client.txt", "RDMA_Write BW Test", 5, 1, 0, false, "MB/sec", "65536 1000 67.02 62.21 0.000995", [2]string{"CQ Moderation", "1"}},
		{"perftest-6.06/write_bw.server.txt", "RDMA_Write BW Test", 5, 1, 0, true, "MB/sec", "65536 1000 67.02 62.21 0.000995", [2]string{"Max inline data", "0[B]"}},
		{"perftest-6.06/send_bw_b.server.txt", "Send Bidirectional BW Test", 5, 1, 0, true, "MB/sec", "65536 1000 147.46 55.52 0.000888", [2]string{"TX depth", "128"}},
		{"perftest-6.06/write_bw_g.client.txt", "RDMA_Write BW Test", 5, 1, 0, false, "Gb/sec", "", [2]string{"TX depth", "128"}},
		{"perftest-newer/write_bw.client.txt", "RDMA_Write BW Test", 5, 3, 0, false, "MiB/sec", "2 5000 10.56 10.41 5.457612", [2]string{"Lock-free", "OFF"}},
		{"perftest-newer/write_bw_gbits.client.txt", "RDMA_Write BW Test", 5, 1, 0, false, "Gb/sec", "65536 1000 94.31 94.20 0.179670", [2]string{"Number of qps", "2"}},
		{"perftest-newer/read_lat_a.client.txt", "RDMA_Read Latency Test", 9, 3, 0, false, "", "2 1000 25.10 412.77 27.31 29.80 11.02 61.44 412.77", [2]string{"Using DDP", "OFF"}},
	}
	for _, c := range cases {
		p := readPrinted(t, c.file)
		if p.Title != c.title || len(p.Columns) != c.cols || len(p.Rows) != c.rows || len(p.Samples) != c.samples || p.Server != c.server || p.BWUnit != c.unit {
			t.Errorf("%s: title %q, %d columns, %d rows, %d samples, server %v, unit %q; want %q, %d, %d, %d, %v, %q",
				c.file, p.Title, len(p.Columns), len(p.Rows), len(p.Samples), p.Server, p.BWUnit, c.title, c.cols, c.rows, c.samples, c.server, c.unit)
		}
		if c.first != "" && (len(p.Rows) == 0 || strings.Join(p.Rows[0].Fields, " ") != c.first) {
			t.Errorf("%s: rows %v, want the first %q", c.file, p.Rows, c.first)
		}
		if v, ok := p.Setting(c.setting[0]); !ok || v != c.setting[1] {
			t.Errorf("%s: %q = %q (%v), want %q", c.file, c.setting[0], v, ok, c.setting[1])
		}
	}
}

// TestParsePrintedColumns: the column keys of every table layout.
func TestParsePrintedColumns(t *testing.T) {
	cases := map[string]string{
		fmtLat:    "bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9",
		fmtLatDur: "bytes iterations t_avg tps",
		fmtBW:     "bytes iterations bw_peak bw_avg msg_rate",
		fmtBWG:    "bytes iterations bw_peak bw_avg msg_rate",
	}
	for hdr, want := range cases {
		p, err := ParsePrinted([]byte(hdr))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(p.Columns, " "); got != want {
			t.Errorf("%q: columns %q, want %q", hdr, got, want)
		}
	}
}

// TestParsePrintedDropIn: what the drop-in prints (format.go, the goldens)
// parses back to the figures it printed.
func TestParsePrintedDropIn(t *testing.T) {
	b, err := os.ReadFile("testdata/outputs.golden")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, part := range strings.Split(string(b), "\n== ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		p, err := ParsePrinted([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.Contains(body, "#bytes") && len(p.Rows) == 0 {
			t.Errorf("%s: a table, but no rows parsed", name)
		}
		n += len(p.Rows)
	}
	if n == 0 {
		t.Fatal("no rows in outputs.golden")
	}
}

// TestParsePrintedRefusesNonFinite: perftest's inf and -nan (a failed
// clock calibration) are an error naming the line and the column.
func TestParsePrintedRefusesNonFinite(t *testing.T) {
	b, err := os.ReadFile("testdata/perftest-newer/send_lat_nan.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParsePrinted(b)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 9 || !strings.Contains(err.Error(), `column "t_min[usec]": "inf" is not a finite number`) {
		t.Fatalf("got %v, want line 9's t_min named", err)
	}
}

// TestImport: the imported documents carry perftest's figures in
// rdmabench's units, marked as perftest's, and validate against the schema.
func TestImport(t *testing.T) {
	cases := []struct {
		file  string
		check func(*result.Document) bool
	}{
		{"perftest-6.06/send_lat.client.txt", func(d *result.Document) bool {
			r := d.Results[0]
			return d.Tool == "perftest" && d.Role == "client" && r.Op == "send" && r.Mode == "lat" && r.SizeBytes == 2 && r.Iterations == 1000 &&
				r.Latency.P50.NS == 14190 && r.Latency.P99.NS == 17948330 && r.Latency.Min == 12860 && r.Latency.Mean == 1743000 &&
				r.TxDepth == 1 && strings.HasPrefix(r.TimedInterval, "perftest: ") && d.Env.Device == "rxe0" && d.Env.GIDIndex == 1 && d.Env.PathMTU == 4096
		}},
		{"perftest-6.06/atomic_lat.client.txt", func(d *result.Document) bool {
			return d.Results[0].Op == "fetch_add" && d.Results[0].OutstandingReads == 128
		}},
		{"perftest-6.06/send_lat_D.client.txt", func(d *result.Document) bool {
			r := d.Results[0]
			return r.Latency.Mean == 81990 && !r.Latency.P50.OK && r.Iterations == 12241
		}},
		{"perftest-6.06/write_bw.client.txt", func(d *result.Document) bool {
			r := d.Results[0]
			return r.Op == "write" && r.Mode == "bw" && r.Bandwidth.MiBPerSec == 62.21 && r.Bandwidth.Mpps == 0.000995 && r.TxDepth == 128 && r.CQMod == 1 &&
				strings.Contains(strings.Join(d.Warnings, "\n"), "checked against MsgRate")
		}},
		{"perftest-6.06/send_bw_b.server.txt", func(d *result.Document) bool {
			return d.Role == "server" && d.Results[0].Bidirectional && d.Results[0].RxDepth == 512
		}},
		{"perftest-newer/write_bw.client.txt", func(d *result.Document) bool {
			return len(d.Results) == 3 && d.Results[2].SizeBytes == 65536 && d.Results[2].Bandwidth.MiBPerSec == 11245.12
		}},
		{"perftest-newer/write_bw_gbits.client.txt", func(d *result.Document) bool {
			r := d.Results[0]
			return r.Bandwidth.GbitPerSec > 94.19 && r.Bandwidth.GbitPerSec < 94.21 && r.QPs == 2 && r.CQMod == 100
		}},
		{"perftest-newer/read_lat_a.client.txt", func(d *result.Document) bool {
			return len(d.Results) == 3 && d.Results[1].Op == "read" && d.Results[1].SizeBytes == 4 && d.Results[1].Latency.P99_9.NS == 398010
		}},
	}
	for _, c := range cases {
		p := readPrinted(t, c.file)
		doc, err := Import(p, c.file, ImportOptions{Version: "6.06"})
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if !c.check(doc) {
			t.Errorf("%s: %+v", c.file, doc)
		}
		if err := doc.Check(); err != nil {
			t.Errorf("%s: the imported document fails its own checks: %v", c.file, err)
		}
		if err := result.WriteJSONFile(filepath.Join(t.TempDir(), "x.json"), doc); err != nil {
			t.Fatal(err)
		}
	}
}

// TestImportRefuses: no table, no title, an unknown tool.
func TestImportRefuses(t *testing.T) {
	p := readPrinted(t, "perftest-6.06/read_lat.server.txt")
	if _, err := Import(p, "x", ImportOptions{}); !errors.Is(err, ErrNoTable) {
		t.Errorf("READ server: %v, want ErrNoTable", err)
	}
	q := &Printed{Rows: []Row{{}}}
	if _, err := Import(q, "x", ImportOptions{}); err == nil || !strings.Contains(err.Error(), "--tool") {
		t.Errorf("no title: %v", err)
	}
	if _, err := Import(q, "x", ImportOptions{Tool: "ib_foo"}); err == nil || !strings.Contains(err.Error(), `"ib_foo" unknown`) {
		t.Errorf("unknown tool: %v", err)
	}
	vals, _ := ParsePrinted([]byte("62.21\n"))
	vals.Title = "RDMA_Write BW Test"
	if _, err := Import(vals, "x", ImportOptions{}); !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "--output") {
		t.Errorf("--output numbers: %v", err)
	}
}

// FuzzParsePrinted: any output parses or fails with a ParseError, never
// panics; what parses imports or fails cleanly.
func FuzzParsePrinted(f *testing.F) {
	for _, dir := range []string{"testdata/perftest-6.06", "testdata/perftest-newer"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(fmtLat + " 2 1000 1 2 3 4 5 6 7\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePrinted(b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, r := range p.Rows {
			if len(r.Values) != len(p.Columns) {
				t.Fatalf("row %q: %d values, %d columns", r.Line, len(r.Values), len(p.Columns))
			}
		}
		_, _ = Import(p, "fuzz", ImportOptions{})
	})
}

// TestParseSecondHeader: a second table header with the first's columns
// goes on with the same table; one with other columns is refused, since the
// rows read so far are under the first (found by FuzzParsePrinted).
func TestParseSecondHeader(t *testing.T) {
	bw := " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
	row := " 65536      1000             67.02              62.21  \t\t   0.000995\n"
	p, err := ParsePrinted([]byte(bw + row + bw + row))
	if err != nil || len(p.Rows) != 2 || p.Tables != 2 {
		t.Fatalf("same header twice: %v, %+v", err, p)
	}
	_, err = ParsePrinted([]byte(bw + row + " #bytes\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "second table header") {
		t.Fatalf("another header after rows: %v, want a ParseError naming the second header", err)
	}
}
