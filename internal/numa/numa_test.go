package numa

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "0", want: []int{0}},
		{in: "0-3", want: []int{0, 1, 2, 3}},
		{in: "2-3,0", want: []int{0, 2, 3}},
		{in: "0-1,1-2", want: []int{0, 1, 2}},
		{in: " 4 , 6-7 ", want: []int{4, 6, 7}},
		{in: "", bad: true},
		{in: "3-1", bad: true},
		{in: "-1", bad: true},
		{in: "a", bad: true},
		{in: "0,,1", bad: true},
		{in: "0-99999999999", bad: true},
	} {
		got, err := ParseList(tc.in)
		if (err != nil) != tc.bad || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestFormatList(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "0-3": "0-3", "0,2-3,8": "0,2-3,8", "5,1,2": "1-2,5"} {
		l, _ := ParseList(in)
		if got := FormatList(l); got != want {
			t.Errorf("FormatList(%v) = %q, want %q", l, got, want)
		}
	}
}

// fakeRoot builds a sysfs tree with files (path relative to the root:
// content) and points Root at it for the test.
func fakeRoot(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := Root
	Root = dir
	t.Cleanup(func() { Root = old })
}

func TestTopology(t *testing.T) {
	fakeRoot(t, map[string]string{
		"sys/class/infiniband/mlx5_0/device/numa_node": "1\n",
		"sys/class/infiniband/rxe0/device/numa_node":   "-1\n",
		"sys/class/infiniband/bad0/device/numa_node":   "x\n",
		"sys/devices/system/node/online":               "0-1\n",
		"sys/devices/system/node/node0/cpulist":        "0-1\n",
		"sys/devices/system/node/node1/cpulist":        "2-3,6\n",
	})
	for dev, want := range map[string]int{"mlx5_0": 1, "rxe0": -1, "bad0": -1, "siw0": -1, "": -1, "../x": -1} {
		if got := DeviceNode(dev); got != want {
			t.Errorf("DeviceNode(%q) = %d, want %d", dev, got, want)
		}
	}
	if got, err := Online(); err != nil || !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("Online() = %v, %v; want [0 1]", got, err)
	}
	if got, err := CPUs(1); err != nil || !reflect.DeepEqual(got, []int{2, 3, 6}) {
		t.Errorf("CPUs(1) = %v, %v; want [2 3 6]", got, err)
	}
	if _, err := CPUs(2); err == nil {
		t.Error("CPUs(2) of a missing node: no error")
	}
	if _, err := CPUs(-1); err == nil {
		t.Error("CPUs(-1): no error")
	}
}

func TestOnlineWithoutNUMA(t *testing.T) {
	fakeRoot(t, map[string]string{})
	if got, err := Online(); err != nil || !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("Online() without sysfs nodes = %v, %v; want [0]", got, err)
	}
}
