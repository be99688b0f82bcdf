package dropin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/dropin/peer"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
)

// TestPerftestFirst: the drop-in's server tells a perftest client (its
// version string first) from an rdmabench one (its header's magic).
func TestPerftestFirst(t *testing.T) {
	for in, want := range map[string]bool{"6.06": true, "6.30": true, "26.0": true, "RDMB": false, "\x00\x00\x00\x00": false, ".606": false, "6606": false} {
		if got := perftestFirst([]byte(in)); got != want {
			t.Errorf("perftestFirst(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestPerftestParams: the SYMMETRIC options a perftest >= 6.28 compares.
func TestPerftestParams(t *testing.T) {
	o, err := perftest.Parse(perftest.Tools["ib_write_lat"], []string{"-s", "64", "host"})
	if err != nil {
		t.Fatal(err)
	}
	p := wireTest(o).Params()
	if p.Verb != wire.VerbWrite || p.Tst != wire.TstLat || p.ReportFmt != wire.ReportMiB || p.AtomicType != wire.CmpAndSwap || p.TestMethod != wire.RunRegular {
		t.Fatalf("%+v", p)
	}
	for _, tc := range []struct {
		args []string
		want int32
	}{{[]string{"host"}, wire.FetchAndAdd}, {[]string{"-A", "CMP_AND_SWAP", "host"}, wire.CmpAndSwap}} {
		a, err := perftest.Parse(perftest.Tools["ib_atomic_bw"], tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := wireTest(a).Params().AtomicType; got != tc.want {
			t.Errorf("ib_atomic_bw %v: atomicType %d, want %d", tc.args, got, tc.want)
		}
	}
	if s, sizes, err := facingSpec(o); err != nil || s.Size != 64 || sizes != nil {
		t.Fatalf("facingSpec: %v %v %v", s.Size, sizes, err)
	}
	if r, err := perftest.Parse(perftest.Tools["ib_write_bw"], []string{"-R", "host"}); err != nil {
		t.Fatal(err)
	} else if s, _, err := facingSpec(r); err != nil || !s.RDMACM || wireTest(r).Params().RDMACM != 1 {
		t.Errorf("ib_write_bw -R against perftest: %v (rdma_cm %v)", err, s.RDMACM)
	}
	for _, args := range [][]string{{"-a", "-D", "5", "host"}, {"-b", "-a", "host"}, {"-b", "-D", "5", "host"}, {"-a", "-c", "UC", "host"}, {"--data_validation", "host"}} {
		bw, err := perftest.Parse(perftest.Tools["ib_write_bw"], args)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := facingSpec(bw); !errors.Is(err, peer.ErrPerftestUnsupported) || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("ib_write_bw %v against perftest: %v", args, err)
		}
	}
}

// TestPerftestSpecAll: -a against perftest is every power of two from 2 B
// to 8 MiB (perftest's 1<<1 .. 1<<23) on one set of QPs (the atomic
// tools take no -a, as perftest's).
func TestPerftestSpecAll(t *testing.T) {
	for tool, want := range map[string]int{"ib_write_lat": 23, "ib_send_lat": 23, "ib_read_lat": 23, "ib_send_bw": 23, "ib_write_bw": 23, "ib_read_bw": 23} {
		o, err := perftest.Parse(perftest.Tools[tool], []string{"-a", "host"})
		if err != nil {
			t.Fatal(err)
		}
		s, sizes, err := facingSpec(o)
		if err != nil {
			t.Fatalf("%s -a: %v", tool, err)
		}
		if len(sizes) != want {
			t.Fatalf("%s -a: %d sizes %v, want %d", tool, len(sizes), sizes, want)
		}
		for i, n := range sizes {
			if i > 0 && n != 2*sizes[i-1] {
				t.Errorf("%s -a: size %d after %d", tool, n, sizes[i-1])
			}
		}
		if want > 1 && (sizes[0] != 2 || sizes[len(sizes)-1] != 8<<20) {
			t.Errorf("%s -a: sizes %d..%d, want 2..8388608", tool, sizes[0], sizes[len(sizes)-1])
		}
		if s.Size != sizes[0] {
			t.Errorf("%s -a: spec size %d, want the first size %d", tool, s.Size, sizes[0])
		}
		if wireTest(o).Params().TestMethod != wire.RunAll {
			t.Errorf("%s -a: test method %v, want RUN_ALL", tool, wireTest(o).Params().TestMethod)
		}
	}
}

// TestPerftestSpecModes: -D and -b in
// the bandwidth tools run against perftest, and -D in the latency tools.
func TestPerftestSpecModes(t *testing.T) {
	for _, c := range []struct {
		tool string
		args []string
		ok   bool
	}{
		{"ib_write_bw", []string{"-D", "5", "host"}, true},
		{"ib_send_bw", []string{"-D", "5", "host"}, true},
		{"ib_read_bw", []string{"-D", "5", "host"}, true},
		{"ib_write_bw", []string{"-b", "host"}, true},
		{"ib_send_bw", []string{"-b", "host"}, true},
		{"ib_write_lat", []string{"-D", "5", "host"}, true},
		{"ib_send_lat", []string{"-D", "2", "host"}, true},
		{"ib_read_lat", []string{"-D", "2", "host"}, true},
		{"ib_atomic_lat", []string{"-D", "2", "host"}, true},
		{"ib_write_lat", []string{"-D", "2", "-a", "host"}, false},
		{"ib_write_bw", []string{"-D", "2", "host"}, true},
	} {
		o, err := perftest.Parse(perftest.Tools[c.tool], c.args)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = facingSpec(o)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, peer.ErrPerftestUnsupported)) {
			t.Errorf("%s %v against perftest: %v, want ok %v", c.tool, c.args, err, c.ok)
		}
	}
}

// TestPerftestShownPeak: facing perftest, BW peak is perftest's or 0.00,
// never rdmabench's best one-second interval (which perftest does not
// print), and the results themselves stay as measured.
func TestPerftestShownPeak(t *testing.T) {
	o, err := perftest.Parse(perftest.Tools["ib_write_bw"], []string{"-D", "2", "host"})
	if err != nil {
		t.Fatal(err)
	}
	iv := []result.Result{{Op: "write", Mode: "bw", SizeBytes: 65536, Iterations: 10,
		Bandwidth: result.Bandwidth{MiBPerSec: 5}, Intervals: []result.Interval{{Bandwidth: result.Bandwidth{MiBPerSec: 9}}}}}
	pk := iv[0]
	pk.PerftestPeak = &result.Bandwidth{MiBPerSec: 7}
	for _, c := range []struct {
		rs   []result.Result
		want string
	}{{iv, "0.00"}, {[]result.Result{pk}, "7.00"}} {
		var b strings.Builder
		if err := perftest.WriteTable(&b, o, perftest.Client, shownFacingPerftest(c.rs)); err != nil {
			t.Fatal(err)
		}
		row := strings.Fields(strings.Split(strings.TrimSpace(b.String()), "\n")[2])
		if len(row) < 3 || row[2] != c.want {
			t.Errorf("peak column %v, want %s:\n%s", row, c.want, b.String())
		}
	}
	if iv[0].PerftestPeak != nil {
		t.Error("shownFacingPerftest changed the results")
	}
}

// TestPerftestQPParams: with -c UC and -c UD the drop-in runs against
// perftest, and negotiates the connection type with a perftest >= 6.28.
func TestPerftestQPParams(t *testing.T) {
	for _, tc := range []struct {
		tool, conn string
		want       int32
	}{
		{"ib_send_lat", "RC", wire.ConnRC},
		{"ib_write_lat", "UC", wire.ConnUC},
		{"ib_send_bw", "UC", wire.ConnUC},
		{"ib_write_bw", "UC", wire.ConnUC},
		{"ib_send_lat", "UD", wire.ConnUD},
		{"ib_send_bw", "UD", wire.ConnUD},
	} {
		o, err := perftest.Parse(perftest.Tools[tc.tool], []string{"-c", tc.conn, "host"})
		if err != nil {
			t.Fatal(err)
		}
		if got := wireTest(o).Params().ConnectionType; got != tc.want {
			t.Errorf("%s -c %s: connection_type %d, want %d", tc.tool, tc.conn, got, tc.want)
		}
		if s, _, err := facingSpec(o); err != nil || s.QPTypeLabel() != tc.conn {
			t.Errorf("%s -c %s against perftest: %v (QP type %s)", tc.tool, tc.conn, err, s.QPTypeLabel())
		}
	}
}

// TestDropInRecordRefusedFirst: a RDMABENCH_DROPIN_RECORD path that cannot
// be written is refused before the exchange, naming the variable.
func TestDropInRecordRefusedFirst(t *testing.T) {
	t.Setenv("RDMABENCH_DROPIN_RECORD", filepath.Join(t.TempDir(), "no-such-dir", "x.json"))
	if _, _, err := record(Config{}); err == nil || !strings.Contains(err.Error(), "RDMABENCH_DROPIN_RECORD") {
		t.Fatalf("record = %v, want a refusal naming RDMABENCH_DROPIN_RECORD", err)
	}
	ok := filepath.Join(t.TempDir(), "x.json")
	t.Setenv("RDMABENCH_DROPIN_RECORD", ok)
	rec, save, err := record(Config{})
	if err != nil || rec == nil {
		t.Fatalf("record(%s) = %v, %v", ok, rec, err)
	}
	save()
	if _, err := os.Stat(ok); err != nil {
		t.Fatal(err)
	}
}
