package vsperftest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// bed writes the guest's /out of one TestBenchVsPerftest run: perftest's
// outputs from bench/perftest's recorded 6.06 ones (t_typical 14.19 us,
// 62.21 MB/sec = MiB/s), rdmabench's documents with p50 rbP50 ns and
// rbBW MiB/s, scaled by 1 + run/100.
func bed(t *testing.T, rbP50, rbBW float64, drop string) string {
	dir := t.TempDir()
	lat, err := os.ReadFile("../../bench/perftest/testdata/perftest-6.06/send_lat.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	bw, err := os.ReadFile("../../bench/perftest/testdata/perftest-6.06/write_bw.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	bw = bytes.Replace(bytes.Replace(bw, []byte("TX depth        : 128"), []byte("TX depth        : 128"), 1), []byte("CQ Moderation   : 1\n"), []byte("CQ Moderation   : 100\n"), 1)
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var status strings.Builder
	rb := func(name string, f float64, mode string) {
		status.WriteString(name + " 0\n")
		if name == drop {
			return
		}
		doc := resulttest.Document(t)
		r := doc.Results[0]
		if mode == "bw" {
			r = doc.Results[1]
			r.Bandwidth = result.NewBandwidth(1<<20, int64(rbBW*f*1000), 1e12)
			r.Sides = &result.BidirSides{Client: result.SideResult{Bandwidth: result.Bandwidth{MiBPerSec: 1}}, Server: result.SideResult{Bandwidth: result.Bandwidth{MiBPerSec: 2}}}
		} else {
			r.Iterations = 1000
			v := rbP50 * f
			r.Latency = result.Latency{Count: 1000, Min: v / 2, Mean: v * 1.1, P50: result.Nanos{NS: v, OK: true},
				P99: result.Nanos{NS: v * 2, OK: true}, Max: v * 10}
			r.Histogram, r.HistogramDivisor, r.Samples = "", 0, 0 // the summary above is the whole record
		}
		doc.Results = []result.Result{r}
		doc.PeakRSSBytes = 20 << 20
		if err := result.WriteJSONFile(filepath.Join(dir, name+".json"), doc); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 4; i++ {
		f := 1 + float64(i)/100
		for _, op := range []string{"send", "write", "read"} {
			write(fmt.Sprintf("lat-%s-pt%d.txt", op, i), lat)
			status.WriteString(fmt.Sprintf("lat-%s-pt%d 0\n", op, i))
			rb(fmt.Sprintf("lat-%s-rb%d", op, i), f, "lat")
		}
		for _, op := range []string{"send", "write"} {
			write(fmt.Sprintf("ilat-%s-pt%d.txt", op, i), lat)
			status.WriteString(fmt.Sprintf("ilat-%s-pt%d 0\n", op, i))
			rb(fmt.Sprintf("ilat-%s-rb%d", op, i), f*0.9, "lat")
		}
		for _, k := range []string{"bw", "bwq", "bwcm", "bwb"} {
			write(fmt.Sprintf("%s-pt%d.txt", k, i), bw)
			status.WriteString(fmt.Sprintf("%s-pt%d 0\n", k, i))
			rb(fmt.Sprintf("%s-rb%d", k, i), f, "bw")
		}
	}
	rb("rss-small", 1, "lat")
	rb("rss-large", 1, "lat")
	write("status", []byte(status.String()))
	write("perftest-version.txt", []byte("Version: 6.06\n"))
	write("rdmabench-version.txt", []byte("rdmabench 0.0.0+gtest\n"))
	write("clocksource", []byte("hpet\n"))
	for i, v := range []string{"100", "160", "200", "230"} {
		write(fmt.Sprintf("t%d", i), []byte(v+"\n"))
	}
	return dir
}

func analyse(t *testing.T, dir string) (string, string, int) {
	var out, errw bytes.Buffer
	n := Run(Config{Dir: dir, Iters: 1000, BWDur: 3, Reps: 4, RSSSmall: 10000, RSSLarge: 1000000, Resamples: 2000,
		HostSecs: 300, NProc: 2, LoadStart: "1.00", LoadEnd: "2.00", Others: "0", Prog: "bench-vs-perftest.sh"}, &out, &errw)
	return out.String(), errw.String(), n
}

// TestReport: the table keeps its columns, the ratios their targets, and
// each ratio of medians has its bootstrap interval.
func TestReport(t *testing.T) {
	out, errs, problems := analyse(t, bed(t, 14190, 62.21, ""))
	t.Log(out)
	if problems != 0 || errs != "" {
		t.Fatalf("%d problems: %s", problems, errs)
	}
	for _, want := range []string{
		"perftest 6.06 | rdmabench 0.0.0+gtest | guest time: lat 60 s, bw 40 s, rss 30 s",
		"guest clocksource: hpet (not TSC",
		"latency 2 B [usec]     t_typical     t_avg       p99 |       p50      mean       p99",
		"send (RTT/2)               14.19   1743.00  17948.33 |     14.54     16.00     29.09\n",
		"read (RTT)                 14.19",
		"send (RTT/2)                     14.19 (-I 0, ran 0) |            13.09 (inline 0 B)\n",
		"WRITE bw 64 KiB [MiB/s]         ib_write_bw avg 62.21 |               rdmabench 63.77\n",
		"  send  t_typical 14.19 14.19 14.19 14.19 | p50 14.33 14.47 14.62 14.76",
		"(perftest 'MB/sec' checked against MsgRate x size: it is MiB/s)",
		// MiB/s stays MiB/s in the -q 4, -R and -b rows too (the awk version
		// matched its own note's 'MB/sec' and scaled them by 10^6/2^20)
		"  ... with rdma_cm              ib_write_bw -R 62.21 |",
		"  bw -b MiB/s 62.21 62.21 62.21 62.21 |",
		"peak RSS, rdmabench SEND lat: 10^4 it 20.00 MiB (20971520 B), 10^6 it 20.00 MiB (20971520 B) [peak_rss_bytes]",
		"ratio                                               value  target     result 95 % interval (bootstrap)",
		"send: rdmabench p50 / perftest t_typical (no inline)      1.025  0.95-1.05  PASS   1.01",
		"send inline: rdmabench default / ib_send_lat -I      0.922  <= 1.00    PASS   0.909-0.936\n",
		"send inline effect: default / --inline-size perftest      0.900  info              0.8",
		"bw: rdmabench / ib_write_bw average (MiB/s)         1.025  >= 0.95    PASS   1.010-1.040\n",
		"peak RSS growth 10^4 -> 10^6 it (MiB)               0.000  < 4 MiB    PASS\n",
		"wall time: 300 s (the runs, in one guest); host load avg 1.00 at start, 2.00 at end; 2 host CPUs; other qemu guests running at start: 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestReportProblems: a missing document or a failed run is a problem
// naming it; the report still prints, with n/a.
func TestReportProblems(t *testing.T) {
	out, errs, problems := analyse(t, bed(t, 14190, 62.21, "lat-read-rb2"))
	if problems != 1 || !strings.Contains(errs, "bench-vs-perftest.sh: error: lat-read-rb2.json missing") {
		t.Errorf("%d problems: %s", problems, errs)
	}
	if !strings.Contains(out, "read  t_typical 14.19 14.19 14.19 14.19 | p50 14.33 n/a 14.62 14.76") {
		t.Errorf("report:\n%s", out)
	}
	dir := bed(t, 14190, 62.21, "")
	nan, err := os.ReadFile("../../bench/perftest/testdata/perftest-newer/send_lat_nan.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lat-send-pt3.txt"), nan, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, problems = analyse(t, dir)
	if problems != 1 || !strings.Contains(errs, `lat-send-pt3.txt: perftest output line 9`) || !strings.Contains(errs, "not a finite number") {
		t.Errorf("inf row: %d problems: %s", problems, errs)
	}
}
