package wirebw

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

// bed writes one round of the script's files: rdmabench at rb MiB/s and
// ib_write_bw at pt MiB/s (perftest's MB/sec being MiB/s), run 7 failed.
func bed(t *testing.T, rb, pt []float64) (string, string) {
	dir := t.TempDir()
	b, a := filepath.Join(dir, "b"), filepath.Join(dir, "a")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	order := strings.Fields("pt rb rb pt rb pt pt rb")
	ri, pi := 0, 0
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for j, tool := range order {
		i := j + 1
		for k, g := range []string{b, a} {
			write(filepath.Join(g, fmt.Sprintf("%s-ctr-%d-0.txt", tool, i)), "completer_retry_err 10\ncpu_busy 100\ncpu_total 1000\n")
			write(filepath.Join(g, fmt.Sprintf("%s-ctr-%d-1.txt", tool, i)), fmt.Sprintf("completer_retry_err %d\ncpu_busy 600\ncpu_total 2000\n", 12+k))
		}
		if tool == "rb" {
			doc := resulttest.Document(t)
			doc.Results = doc.Results[:1]
			doc.Results[0].Bandwidth = result.NewBandwidth(65536, int64(rb[ri]*16), 1e9) // rb[ri] MiB in 1 s
			ri++
			if err := result.WriteJSONFile(filepath.Join(b, fmt.Sprintf("rb-%d.json", i)), doc); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(b, fmt.Sprintf("rb-%d.txt", i)), "table\n")
			continue
		}
		if i == 7 {
			write(filepath.Join(b, "pt-7.txt"), " Couldn't connect to 198.51.100.1:18515\nfailed\n")
			continue
		}
		v := pt[pi]
		pi++
		write(filepath.Join(b, fmt.Sprintf("pt-%d.txt", i)), fmt.Sprintf(
			" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n 65536      2000           %.2f              %.2f                %.6f\n", v+1, v, v*16/1e6))
	}
	return dir, strings.Join(order, " ")
}

func TestSummarise(t *testing.T) {
	dir, order := bed(t, []float64{24, 25, 26, 27}, []float64{25, 26, 30})
	var w bytes.Buffer
	if err := summarise(dir, strings.Fields(order), 2000, 0.97, &w); err != nil {
		t.Fatal(err)
	}
	out := w.String()
	t.Log(out)
	for _, want := range []string{
		"run 1 ib_write_bw: 25.00 MiB/s (retransmissions client 2, server 3; guest CPUs busy client 50%, server 50%)",
		"run 2 rdmabench: 24.00 MiB/s",
		"run 7 ib_write_bw: FAILED: Couldn't connect to 198.51.100.1:18515",
		"round 1: rdmabench 25.50 MiB/s (4 runs), ib_write_bw 26.00 MiB/s (3 runs); ratio 0.981",
		"ratio of medians 0.981, 95 % bootstrap interval 0.",
		"target >= 0.97: UNDECIDED", // the ratio passes, its interval reaches below 0.97 with so few runs
		"1 runs failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
