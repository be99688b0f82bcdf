package dropin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest"
)

// TestDropInSpecs: perftest's defaults and counts become rdmabench's tests.
func TestDropInSpecs(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		n          int
		check      func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool
	}{
		{"ib_send_lat", "h", 1, func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool {
			return op == "send" && mode == "lat" && size == 2 && iters == 1000
		}},
		{"ib_write_bw", "-q 4 -n 100 h", 1, func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool {
			return op == "write" && mode == "bw" && size == 65536 && iters == 400 && tx == 100 && cq == 1 && qps == 4
		}},
		{"ib_atomic_bw", "-A CMP_AND_SWAP -D 3 h", 1, func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool {
			return op == "cmp_swap" && size == 8 && d == 3*time.Second && iters == 0 && tx == 128 && cq == 100
		}},
		{"ib_read_lat", "-a h", 23, nil},
	} {
		o, err := perftest.Parse(perftest.Tools[tc.tool], strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		specs, err := specs(o)
		if err != nil || len(specs) != tc.n {
			t.Fatalf("%s %s: %d specs, %v", tc.tool, tc.args, len(specs), err)
		}
		s := specs[0]
		if tc.check != nil && !tc.check(s.Op, s.Mode, s.Size, s.Iters, s.TxDepth, s.CQMod, s.NumQPs(), s.Duration) {
			t.Errorf("%s %s: %+v", tc.tool, tc.args, s)
		}
	}
}

// TestWriteUsage: the usage names the tool, the options taken and the
// refused ones.
func TestWriteUsage(t *testing.T) {
	var b bytes.Buffer
	WriteUsage(&b, perftest.Tools["ib_write_bw"])
	for _, want := range []string{"ib_write_bw <host>", "Options taken:", "-s, --size", "Refused with exit 2", "--run_infinitely"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage has no %q:\n%s", want, b.String())
		}
	}
}
