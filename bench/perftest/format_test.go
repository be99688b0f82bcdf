package perftest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/internal/golden"
)

func ok(ns float64) result.Nanos { return result.Nanos{NS: ns, OK: true} }

// rxeEnv is the environment of rxe0 on lo in the guest.
var rxeEnv = result.Env{Device: "rxe0", LinkLayer: "Ethernet", Transport: "RoCE", ActiveMTU: 4096, PathMTU: 4096, GIDIndex: 1}

// sendLat has the figures of perftest 6.06's ib_send_lat client row in
// testdata/perftest-6.06/send_lat.client.txt, in ns.
func sendLat() result.Result {
	return result.Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: 1000, TxDepth: 1, RxDepth: 512,
		Latency: result.Latency{Count: 1000, Min: 12860, Max: 125957660, P50: ok(14190), Mean: 1743000, Stdev: 3244360,
			P99: ok(17948330), P99_9: ok(125957660)}}
}

// writeBW has the figures of perftest 6.06's ib_write_bw row.
func writeBW() result.Result {
	return result.Result{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: 1000, TxDepth: 128, CQMod: 1,
		Bandwidth: result.Bandwidth{MiBPerSec: 62.21, Mpps: 0.000995},
		Intervals: []result.Interval{{Bandwidth: result.Bandwidth{MiBPerSec: 67.02}}, {Bandwidth: result.Bandwidth{MiBPerSec: 50}}}}
}

func mustParse(t *testing.T, tool, args string) Options {
	t.Helper()
	o, err := Parse(Tools[tool], strings.Fields(args))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func real(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "perftest-6.06", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableOf is the part of perftest's output from the "#bytes" header on.
func tableOf(s string) string {
	i := strings.Index(s, " #bytes")
	if i < 0 {
		return ""
	}
	return s[i:]
}

// TestTablesMatchPerftest: given perftest's own figures, the rows and
// headers are byte for byte those perftest 6.06 printed in the guest.
func TestTablesMatchPerftest(t *testing.T) {
	for _, tc := range []struct {
		file, tool, args string
		side             Side
		r                result.Result
	}{
		{"send_lat.client.txt", "ib_send_lat", "h", Client, sendLat()},
		{"write_bw.client.txt", "ib_write_bw", "-n 1000 h", Client, writeBW()},
		{"write_bw.server.txt", "ib_write_bw", "-n 1000", Server, writeBW()},
		{"send_lat_D.client.txt", "ib_send_lat", "-D 2 h", Client, result.Result{SizeBytes: 2, Iterations: 12241,
			Latency: result.Latency{Mean: 81990}, DurationNS: durNS(12241 / 6098.31)}},
		{"write_bw_g.client.txt", "ib_write_bw", "--report_gbits h", Client, result.Result{SizeBytes: 65536, Iterations: 1000,
			Bandwidth: result.Bandwidth{GbitPerSec: 0.49, Mpps: 0.000932}, Intervals: []result.Interval{{Bandwidth: result.Bandwidth{GbitPerSec: 0.55}}}}},
		{"send_bw_b.server.txt", "ib_send_bw", "-b", Server, result.Result{SizeBytes: 65536, Iterations: 2000,
			Bandwidth: result.Bandwidth{MiBPerSec: 55.52, Mpps: 0.000888}, Intervals: []result.Interval{{Bandwidth: result.Bandwidth{MiBPerSec: 147.46}}},
			Sides: &result.BidirSides{Client: result.SideResult{Ops: 1001}, Server: result.SideResult{Ops: 1000}}}},
	} {
		var b bytes.Buffer
		if err := WriteTable(&b, mustParse(t, tc.tool, tc.args), tc.side, []result.Result{tc.r}); err != nil {
			t.Fatal(err)
		}
		got, want := tableOf(b.String()), tableOf(real(t, tc.file))
		if got != want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.file, got, want)
		}
		if !strings.HasPrefix(b.String(), resultLine) {
			t.Errorf("%s: the table does not open with perftest's dashed line", tc.file)
		}
	}
}

// labels are the header box's labels, in order: the text before each ':'
// (two per line where perftest pairs them), and the title line.
func labels(s string) []string {
	var out []string
	box := s[strings.Index(s, resultLine+"                    ")+len(resultLine):] // the box opens with the title
	box = box[:strings.Index(box, resultLine)]
	for _, line := range strings.Split(strings.TrimSuffix(box, "\n"), "\n") {
		for _, part := range strings.Split(line, "\t\t") {
			k, _, _ := strings.Cut(part, ":")
			out = append(out, strings.TrimSpace(k))
		}
	}
	return out
}

// TestHeaderMatchesPerftest: the header box has perftest's title and
// labels in perftest's order, on each side (the client's TX depth, the
// SEND server's RX depth, bandwidth's CQ moderation, READ's outstanding
// reads).
func TestHeaderMatchesPerftest(t *testing.T) {
	for _, tc := range []struct {
		file, tool, args string
		side             Side
		r                result.Result
	}{
		{"send_lat.client.txt", "ib_send_lat", "-x 1 h", Client, sendLat()},
		{"send_lat.server.txt", "ib_send_lat", "-x 1", Server, sendLat()},
		{"write_bw.client.txt", "ib_write_bw", "-x 1 h", Client, writeBW()},
		{"write_bw.server.txt", "ib_write_bw", "-x 1", Server, writeBW()},
		{"read_lat.server.txt", "ib_read_lat", "-x 1", Server, result.Result{OutstandingReads: 128}},
		{"atomic_lat.client.txt", "ib_atomic_lat", "-x 1 h", Client, result.Result{OutstandingReads: 128}},
		{"send_bw_b.server.txt", "ib_send_bw", "-b -x 1", Server, result.Result{TxDepth: 128, RxDepth: 512, CQMod: 1}},
	} {
		var b bytes.Buffer
		WriteHeader(&b, mustParse(t, tc.tool, tc.args), tc.side, rxeEnv, tc.r)
		got, want := labels(b.String()), labels(real(t, tc.file))
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: labels\ngot  %q\nwant %q", tc.file, got, want)
		}
	}
}

// TestHistogramSamples: -H lists every sample, sorted, then the table
// again, as perftest does.
func TestHistogramSamples(t *testing.T) {
	h := hist.New()
	for _, v := range []int64{30000, 10000, 20000, 20000} { // RTTs, reported halved
		h.Record(v)
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	r := result.Result{SizeBytes: 2, Iterations: 4, Histogram: enc, HistogramDivisor: 2,
		Latency: result.Latency{Count: 4, Min: 5000, Max: 15000, P50: ok(10000), Mean: 10000, Stdev: 3535.5}}
	var b bytes.Buffer
	if err := WriteTable(&b, mustParse(t, "ib_send_lat", "-H h"), Client, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "send_lat_H.golden", b.Bytes())
	if !regexp.MustCompile(`(?s)#, usec\n1, 5\n2, 10\.\d+\n3, 10\.\d+\n4, 15\n-+\n #bytes`).MatchString(b.String()) {
		t.Errorf("samples:\n%s", b.String())
	}
	// structure as perftest's -H: header, samples, dashes, header, row, dashes
	shape := func(s string) string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(tableOf(s)), "\n") {
			switch {
			case strings.HasPrefix(l, " #bytes"):
				out = append(out, "H")
			case strings.HasPrefix(l, "---"):
				out = append(out, "-")
			case strings.HasPrefix(l, "#, usec"):
				out = append(out, "#")
			case regexp.MustCompile(`^\d+, `).MatchString(l):
				if out[len(out)-1] != "s" {
					out = append(out, "s")
				}
			default:
				out = append(out, "r")
			}
		}
		return strings.Join(out, "")
	}
	if got, want := shape(b.String()), shape(real(t, "send_lat_H.client.txt")); got != want {
		t.Errorf("-H layout %q, perftest's %q", got, want)
	}
}

// TestGolden: whole outputs of both sides, for review.
func TestGolden(t *testing.T) {
	var b bytes.Buffer
	for _, tc := range []struct {
		tool, args string
		side       Side
		rs         []result.Result
	}{
		{"ib_send_lat", "h", Client, []result.Result{sendLat()}},
		{"ib_send_lat", "", Server, []result.Result{sendLat()}},
		{"ib_write_bw", "-a -N -R h", Client, []result.Result{writeBW(), writeBW()}},
		{"ib_atomic_bw", "-A CMP_AND_SWAP -e -l 4 h", Client, []result.Result{{SizeBytes: 8, Iterations: 1000, TxDepth: 128, CQMod: 100, OutstandingReads: 16,
			Bandwidth: result.Bandwidth{MiBPerSec: 0.25, Mpps: 0.03265}}}},
		{"ib_send_bw", "--report_gbits -q 2 h", Client, []result.Result{{SizeBytes: 64, Iterations: 2000, TxDepth: 128, CQMod: 100,
			Bandwidth: result.Bandwidth{GbitPerSec: 0.0123456, Mpps: 0.024}}}},
	} {
		o := mustParse(t, tc.tool, tc.args)
		b.WriteString("== " + tc.tool + " " + tc.args + "\n")
		WriteHeader(&b, o, tc.side, rxeEnv, tc.rs[0])
		if err := WriteTable(&b, o, tc.side, tc.rs); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "outputs.golden", b.Bytes())
}

func TestOutputAndLimits(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, mustParse(t, "ib_write_lat", "--output=latency h"), Client, []result.Result{sendLat()}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&b, mustParse(t, "ib_write_bw", "--output bandwidth h"), Client, []result.Result{writeBW()}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&b, mustParse(t, "ib_write_bw", "--output message_rate --report_gbits h"), Client, []result.Result{writeBW()}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "1743.000000\n62.210000\n0.000995\n" {
		t.Errorf("--output:\n%q", got)
	}
	var h bytes.Buffer
	WriteHeader(&h, mustParse(t, "ib_write_bw", "--output bandwidth h"), Client, rxeEnv, writeBW())
	if h.Len() != 0 {
		t.Errorf("--output printed a header:\n%s", h.String())
	}
	if err := WriteTable(&b, mustParse(t, "ib_write_bw", "--output latency h"), Client, []result.Result{writeBW()}); err == nil {
		t.Error("--output latency of a bandwidth test accepted")
	}
	if err := CheckLimits(mustParse(t, "ib_write_bw", "-w 62 -y 0.0009 h"), []result.Result{writeBW()}); err != nil {
		t.Error(err)
	}
	for _, args := range []string{"-w 63 h", "-y 0.001 h"} {
		if err := CheckLimits(mustParse(t, "ib_write_bw", args), []result.Result{writeBW()}); err == nil {
			t.Errorf("%s: no error below the limit", args)
		}
	}
}

// TestLowCountPercentiles: with too few samples for rdmabench's n/a rule,
// the table still prints numbers: the values at their ranks.
func TestLowCountPercentiles(t *testing.T) {
	h := hist.New()
	for i := int64(1); i <= 100; i++ {
		h.Record(i * 1000)
	}
	enc, _ := h.Encode()
	r := result.Result{SizeBytes: 2, Iterations: 100, Histogram: enc, HistogramDivisor: 1,
		Latency: result.Latency{Count: 100, Min: 1000, Max: 100000, P50: ok(50000), Mean: 50500}}
	var b bytes.Buffer
	if err := WriteTable(&b, mustParse(t, "ib_read_lat", "h"), Client, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(strings.Split(tableOf(b.String()), "\n")[1])
	// ranks 99 and 100 of 100 (the values at the histogram's resolution)
	if len(f) != 9 || !strings.HasPrefix(f[7], "99.") || !strings.HasPrefix(f[8], "100.") {
		t.Errorf("row %q", f)
	}
}

// TestLowCountTypical: with 4 samples (-a -n 5) rdmabench's median is n/a;
// the table prints the middle sample, as perftest's t_typical, not 0.00.
func TestLowCountTypical(t *testing.T) {
	h := hist.New()
	for _, v := range []int64{10000, 20000, 30000, 900000} {
		h.Record(v)
	}
	enc, _ := h.Encode()
	r := result.Result{SizeBytes: 2, Iterations: 4, Histogram: enc, HistogramDivisor: 1,
		Latency: result.Latency{Count: 4, Min: 10000, Max: 900000, Mean: 240000}}
	var b bytes.Buffer
	if err := WriteTable(&b, mustParse(t, "ib_read_lat", "h"), Client, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(strings.Split(tableOf(b.String()), "\n")[1])
	if len(f) != 9 || !strings.HasPrefix(f[4], "20.") {
		t.Errorf("row %q, want t_typical 20.xx", f)
	}
}

func TestReport(t *testing.T) {
	doc := &result.Document{Env: rxeEnv, ServerEnv: &result.Env{Device: "rxe1"}, Results: []result.Result{sendLat(), sendLat()}}
	doc.Results[0].Histogram = strings.Repeat("A", 100_000)
	b, err := NewReport(doc, nil, false, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := DecodeReport(b)
	if err != nil || len(rep.Results) != 2 || rep.Results[0].Histogram != "" || rep.ServerEnv.Device != "rxe1" || rep.Error != "" {
		t.Fatalf("%v %+v", err, rep)
	}
	if b, _ = NewReport(doc, nil, true, 1<<20); !bytes.Contains(b, []byte("AAAA")) {
		t.Error("-H: histogram dropped")
	}
	b, err = NewReport(doc, os.ErrDeadlineExceeded, true, 20_000) // too big with the histogram, fits without
	if rep, _ = DecodeReport(b); err != nil || len(rep.Results) != 2 || rep.Results[0].Histogram != "" || rep.Error == "" {
		t.Errorf("%v %+v", err, rep)
	}
	for range 100 {
		doc.Results = append(doc.Results, sendLat())
	}
	b, err = NewReport(doc, nil, true, 20_000) // too big even without: results dropped, said so
	if rep, _ = DecodeReport(b); err != nil || len(rep.Results) != 0 || !strings.Contains(rep.Error, "exceed") {
		t.Errorf("%v %+v", err, rep)
	}
	for _, in := range []string{"", "{", `{"results": 3}`, `[]`} {
		if _, err := DecodeReport([]byte(in)); err == nil {
			t.Errorf("DecodeReport(%q) accepted", in)
		}
	}
}

// FuzzDecodeReport: a report is network bytes (the client's bye).
func FuzzDecodeReport(f *testing.F) {
	b, _ := NewReport(&result.Document{Env: rxeEnv, Results: []result.Result{sendLat()}}, nil, false, 1<<20)
	f.Add(b)
	f.Add([]byte(`{"results":[{"latency_ns":{"p50":null}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := DecodeReport(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		o := Options{Tool: Tools["ib_write_bw"]}
		if len(rep.Results) > 0 {
			WriteHeader(&out, o, Server, rep.Env, rep.Results[0])
		}
		WriteTable(&out, o, Server, rep.Results)
	})
}

// durNS is sec seconds in ns.
func durNS(sec float64) int64 { return int64(sec * 1e9) }

// TestLatDurAvg: a -D latency row's t_avg is perftest's, the timed span
// over the round trips (halved for SEND and WRITE, whole for READ and
// atomics), not the mean of the samples, so that it and tps average
// agree as in perftest's table; --output latency prints the same.
func TestLatDurAvg(t *testing.T) {
	r := result.Result{SizeBytes: 2, Iterations: 1000, DurationNS: durNS(0.1), Latency: result.Latency{Mean: 40000}}
	for _, tc := range []struct{ tool, row, output string }{
		{"ib_send_lat", " 2             1000            50.00          10000.00\n", "50.000000\n"},
		{"ib_write_lat", " 2             1000            50.00          10000.00\n", "50.000000\n"},
		{"ib_read_lat", " 2             1000            100.00         10000.00\n", "100.000000\n"},
		{"ib_atomic_lat", " 2             1000            100.00         10000.00\n", "100.000000\n"},
	} {
		var b, out bytes.Buffer
		if err := WriteTable(&b, mustParse(t, tc.tool, "-D 2 h"), Client, []result.Result{r}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), fmtLatDur+tc.row) {
			t.Errorf("%s -D 2: table\n%s\nwant row %q", tc.tool, b.String(), tc.row)
		}
		if err := WriteOutput(&out, mustParse(t, tc.tool, "-D 2 --output latency h"), []result.Result{r}); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.output {
			t.Errorf("%s -D 2 --output latency: %q, want %q", tc.tool, out.String(), tc.output)
		}
	}
}
