package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
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
	p := perftestParams(o)
	if p.Verb != wire.VerbWrite || p.Tst != wire.TstLat || p.ReportFmt != wire.ReportMiB || p.AtomicType != wire.FetchAndAdd || p.TestMethod != wire.RunRegular {
		t.Fatalf("%+v", p)
	}
	if s, err := perftestSpec(o); err != nil || s.Size != 64 {
		t.Fatalf("perftestSpec: %v %v", s.Size, err)
	}
	if r, err := perftest.Parse(perftest.Tools["ib_write_bw"], []string{"-R", "host"}); err != nil {
		t.Fatal(err)
	} else if s, err := perftestSpec(r); err != nil || !s.RDMACM || perftestParams(r).RDMACM != 1 {
		t.Errorf("ib_write_bw -R against perftest: %v (rdma_cm %v)", err, s.RDMACM)
	}
	for _, args := range [][]string{{"-a", "host"}, {"-b", "host"}, {"-D", "2", "host"}} {
		bw, err := perftest.Parse(perftest.Tools["ib_write_bw"], args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := perftestSpec(bw); !errors.Is(err, bench.ErrPerftestUnsupported) || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("ib_write_bw %v against perftest: %v", args, err)
		}
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
		if got := perftestParams(o).ConnectionType; got != tc.want {
			t.Errorf("%s -c %s: connection_type %d, want %d", tc.tool, tc.conn, got, tc.want)
		}
		if s, err := perftestSpec(o); err != nil || s.QPTypeLabel() != tc.conn {
			t.Errorf("%s -c %s against perftest: %v (QP type %s)", tc.tool, tc.conn, err, s.QPTypeLabel())
		}
	}
}
