package report

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// ciResult is a latency result of n samples 1..n µs reporting ps.
func ciResult(t *testing.T, n int64, ps ...float64) result.Result {
	h := hist.New()
	for i := int64(1); i <= n; i++ {
		h.Record(i * 1000)
	}
	r := result.Result{Op: "send", Mode: "lat", SizeBytes: 2, Iterations: n}
	r.UseStats(result.Stats{Percentiles: ps})
	if err := r.SetLatency(h, 1); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLatencyTablePercentiles(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ps         []float64
		want, lack []string
		width      int
	}{
		// 5000 samples: p99.99 (36887 needed) is n/a, p99.999 too
		{"default", nil, []string{"p90[usec]", "p99.9[usec]", "not shown: p99.99 (n/a in every test: too few samples)"}, []string{"p99.99[usec]", "p99.999"}, Width},
		{"default wide", nil, []string{"p90[usec]", "p99.99[usec]", "n/a"}, []string{"p99.999", "not shown"}, 0},
		{"own list", []float64{50, 99, 99.9, 99.999}, []string{"p99.9[usec]", "not shown: p99.999"}, []string{"p90[usec]", "p99.99[usec]"}, Width},
		{"own list wide", []float64{50, 99, 99.9, 99.999}, []string{"p99.999[usec]"}, []string{"p90[usec]", "p99.99[usec]"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteLatencyTable(&b, []result.Result{ciResult(t, 5000, tc.ps...)}, tc.width); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("table lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(b.String(), w) {
					t.Errorf("table has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestCITable(t *testing.T) {
	var b strings.Builder
	if err := WriteCITable(&b, []result.Result{ciResult(t, 1000, 50, 99, 99.9)}, 0); err != nil { // every column
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	// 1000 samples of 1..1000 µs: p50 500 with ranks about 469..531; p99
	// backed (368 needed); p99.9 not (3688 needed)
	lines := strings.Split(out, "\n")
	row := strings.Fields(lines[1])
	if len(row) < 3+2+2+1 || !strings.HasPrefix(row[3], "500.") || !strings.HasPrefix(row[4], "[46") || row[len(row)-1] != "n/a" {
		t.Errorf("row %q", row)
	}
	for _, w := range []string{"p50 [CI][usec]", "95 % confidence interval", "p50 needs 6 samples, p99 368, p99.9 3688"} {
		if !strings.Contains(unwrap(out), w) {
			t.Errorf("lacks %q", w)
		}
	}
}
