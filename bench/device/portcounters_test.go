package device

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
)

// fakePort writes files (name relative to the port directory → content)
// under a fake sysfs root for device dev port 1, and points sysRoot there.
func fakePort(t *testing.T, dev string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	old := sysRoot
	t.Cleanup(func() { sysRoot = old })
	sysRoot = root
	writePort(t, dev, files)
	return root
}

func writePort(t *testing.T, dev string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(sysRoot, "sys/class/infiniband", dev, "ports/1", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadPortCounters(t *testing.T) {
	fakePort(t, "mlx5_0", map[string]string{
		"counters/port_rcv_errors":    "3\n",
		"counters/link_downed":        "1\n",
		"counters/port_xmit_data":     "18446744073709551615\n", // 64-bit maximum
		"counters/not_a_number":       "N/A\n",
		"counters/empty":              "",
		"hw_counters/out_of_sequence": "12\n",
		"hw_counters/link_downed":     "2\n", // also in counters/
		"hw_counters/lifespan":        "10\n",
		"hw_counters/odd name:x":      "4\n", // not a key the schema takes
		"hw_counters/sub/x":           "5\n", // a directory, not a counter
	})
	// an unreadable file is left out (as root, chmod does not stop reads)
	unreadable := filepath.Join(sysRoot, "sys/class/infiniband/mlx5_0/ports/1/counters/unreadable")
	if err := os.WriteFile(unreadable, []byte("7\n"), 0); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"port_rcv_errors": 3, "link_downed": 1, "port_xmit_data": math.MaxUint64,
		"out_of_sequence": 12, "hw_counters/link_downed": 2}
	if _, err := os.ReadFile(unreadable); err == nil {
		want["unreadable"] = 7
	}
	if got := readPortCounters("mlx5_0", 1); !reflect.DeepEqual(got, want) {
		t.Errorf("readPortCounters = %v\nwant %v", got, want)
	}
	if got := readPortCounters("mlx5_0", 2); got != nil {
		t.Errorf("port 2 (absent) = %v, want nil", got)
	}
	if got := readPortCounters("nosuch0", 1); got != nil {
		t.Errorf("absent device = %v, want nil", got)
	}
}

func TestCounterDeltas(t *testing.T) {
	before := map[string]uint64{"sent_pkts": 100, "rcvd_pkts": 50, "link_downed": 4, "idle": 9, "gone": 1, "big": 0}
	after := map[string]uint64{"sent_pkts": 2100, "rcvd_pkts": 2050, "link_downed": 0, "idle": 9, "new": 5, "big": math.MaxUint64}
	d, reset := counterDeltas(before, after)
	want := map[string]int64{"sent_pkts": 2000, "rcvd_pkts": 2000, "big": math.MaxInt64}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("deltas %v, want %v (no zero, no counter missing from either snapshot)", d, want)
	}
	if !reflect.DeepEqual(reset, []string{"link_downed"}) {
		t.Errorf("reset %v, want [link_downed]", reset)
	}
	if d, reset := counterDeltas(before, before); len(d) != 0 || d == nil || reset != nil {
		t.Errorf("nothing moved: deltas %v (want an empty map), reset %v", d, reset)
	}
}

// TestCounterSnapshot: the client's deltas and the server's (from its
// result message) make a result's counters; a side that cannot read its
// counters is absent.
func TestCounterSnapshot(t *testing.T) {
	fakePort(t, "rxe0", map[string]string{"hw_counters/sent_pkts": "10\n", "hw_counters/rcvd_pkts": "10\n",
		"hw_counters/duplicate_request": "3\n"})
	dev := &Device{}
	if SnapshotCounters(dev) != nil || SnapshotCounters(nil) != nil {
		t.Fatal("a snapshot of no device")
	}
	s := &CounterSnapshot{device: "rxe0", port: 1, before: readPortCounters("rxe0", 1)}
	writePort(t, "rxe0", map[string]string{"hw_counters/sent_pkts": "2010\n", "hw_counters/rcvd_pkts": "2011\n",
		"hw_counters/duplicate_request": "0\n"})
	server := &proto.PortCounters{Device: "rxe1", Port: 1, Deltas: map[string]int64{"sent_pkts": 2001, "bogus": -5, "zero": 0}}
	got := s.TestCounters(server)
	want := &result.CounterDeltas{
		Client: &result.PortCounters{Device: "rxe0", Port: 1, Deltas: map[string]int64{"sent_pkts": 2000, "rcvd_pkts": 2001},
			Reset: []string{"duplicate_request"}},
		Server: &result.PortCounters{Device: "rxe1", Port: 1, Deltas: map[string]int64{"sent_pkts": 2001}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("testCounters:\n got %+v %+v\nwant %+v %+v", got.Client, got.Server, want.Client, want.Server)
	}
	if p := s.ServerDeltas(); p == nil || p.Device != "rxe0" || p.Deltas["sent_pkts"] != 2000 || len(p.Reset) != 1 {
		t.Errorf("serverDeltas = %+v", p)
	}
	var none *CounterSnapshot
	if none.TestCounters(nil) != nil || none.ServerDeltas() != nil {
		t.Error("counters without a snapshot")
	}
	if c := none.TestCounters(server); c == nil || c.Client != nil || c.Server == nil {
		t.Errorf("server side only: %+v", c)
	}
}
