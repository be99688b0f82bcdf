package device

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/numa"
)

// fakeNUMA points numa.Root at a sysfs tree with the given files.
func fakeNUMA(t *testing.T, files map[string]string) {
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
	old := numa.Root
	numa.Root = dir
	t.Cleanup(func() { numa.Root = old })
}

func TestPlaceNUMA(t *testing.T) {
	two := map[string]string{
		"sys/class/infiniband/mlx5_0/device/numa_node": "1",
		"sys/class/infiniband/mlx5_1/device/numa_node": "3", // not online
		"sys/class/infiniband/rxe0/device/numa_node":   "-1",
		"sys/devices/system/node/online":               "0-1",
		"sys/devices/system/node/node0/cpulist":        "0-1",
		"sys/devices/system/node/node1/cpulist":        "2-3",
	}
	one := map[string]string{
		"sys/class/infiniband/mlx5_0/device/numa_node": "0",
		"sys/devices/system/node/online":               "0",
		"sys/devices/system/node/node0/cpulist":        "0-3",
	}
	memOnly := map[string]string{
		"sys/class/infiniband/mlx5_0/device/numa_node": "1",
		"sys/devices/system/node/online":               "0-1",
		"sys/devices/system/node/node0/cpulist":        "0-3",
		"sys/devices/system/node/node1/cpulist":        "\n",
	}
	none := func(why string) result.NUMAPlacement {
		return result.NUMAPlacement{Node: -1, Source: result.NUMASourceNone, Reason: why}
	}
	for _, tc := range []struct {
		name  string
		sys   map[string]string
		dev   string
		c     NUMAChoice
		want  result.NUMAPlacement
		cpus  []int
		bound bool
	}{
		{"device", two, "mlx5_0", NUMAChoice{}, result.NUMAPlacement{Node: 1, Source: "device", Reason: "mlx5_0's NUMA node", CPUs: "2-3", MemoryBound: true}, []int{2, 3}, true},
		{"flag", two, "rxe0", NUMAChoice{Node: 0, Set: true}, result.NUMAPlacement{Node: 0, Source: "flag", Reason: "--numa-node", CPUs: "0-1", MemoryBound: true}, []int{0, 1}, true},
		{"no bind", two, "mlx5_0", NUMAChoice{NoBind: true}, none("--no-numa-bind"), nil, false},
		{"rxe", two, "rxe0", NUMAChoice{}, none("rxe0 has no NUMA node"), nil, false},
		{"no sysfs file", two, "siw0", NUMAChoice{}, none("siw0 has no NUMA node"), nil, false},
		{"offline node", two, "mlx5_1", NUMAChoice{}, none("node 3 is not online (online: 0-1)"), nil, false},
		{"one node", one, "mlx5_0", NUMAChoice{}, none("this machine has one NUMA node"), nil, false},
		{"one node, flag", one, "mlx5_0", NUMAChoice{Node: 0, Set: true}, none("this machine has one NUMA node"), nil, false},
		{"memory-only node", memOnly, "mlx5_0", NUMAChoice{},
			result.NUMAPlacement{Node: 1, Source: "device", Reason: "mlx5_0's NUMA node; engine not pinned: node 1 has no CPUs", MemoryBound: true}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeNUMA(t, tc.sys)
			p := placeNUMA(tc.dev, tc.c)
			if p.rec != tc.want || !reflect.DeepEqual(p.cpus, tc.cpus) || p.bound() != tc.bound {
				t.Errorf("placeNUMA(%q, %+v) = %+v, CPUs %v, bound %v; want %+v, %v, %v", tc.dev, tc.c, p.rec, p.cpus, p.bound(), tc.want, tc.cpus, tc.bound)
			}
		})
	}
}

func TestNUMAChoiceValidate(t *testing.T) {
	fakeNUMA(t, map[string]string{"sys/devices/system/node/online": "0-1"})
	for _, tc := range []struct {
		c       NUMAChoice
		wantErr string
	}{
		{NUMAChoice{}, ""},
		{NUMAChoice{NoBind: true}, ""},
		{NUMAChoice{Node: 1, Set: true}, ""},
		{NUMAChoice{Node: 2, Set: true}, "--numa-node 2: no such NUMA node (online: 0-1)"},
		{NUMAChoice{Node: 0, Set: true, NoBind: true}, "--numa-node 0 and --no-numa-bind contradict each other: give one"},
	} {
		err := tc.c.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
			t.Errorf("%+v.Validate() = %v, want %q", tc.c, err, tc.wantErr)
		}
	}
	var ne *NUMANodeError
	if err := (NUMAChoice{Node: 5, Set: true}).Validate(); !errors.As(err, &ne) || ne.Node != 5 {
		t.Errorf("Validate of node 5: %v, want a *NUMANodeError", err)
	}
}

// TestPlanCPUs: --cpu's first CPU takes the engine thread, in loopback
// the second the server's responder, the rest (or, with at most two, all)
// the load QPs' threads; none pins nothing; a CPU not online is refused.
func TestPlanCPUs(t *testing.T) {
	n := hostenv.OnlineCPUs()
	for _, c := range []struct {
		list     string
		loopback bool
		min      int // CPUs online the case needs
		want     CPUPlan
	}{
		{"", true, 1, CPUPlan{Client: -1}},
		{"0", true, 1, CPUPlan{Client: 0, Load: []int{0}}},
		{"0,1", true, 2, CPUPlan{Client: 0, Server: []int{1}, Load: []int{0, 1}}},
		{"0,1", false, 2, CPUPlan{Client: 0, Load: []int{0, 1}}},
		{"0-2", true, 3, CPUPlan{Client: 0, Server: []int{1}, Load: []int{2}}},
		{"0-3", false, 4, CPUPlan{Client: 0, Load: []int{2, 3}}},
	} {
		if n < c.min {
			continue
		}
		got, err := PlanCPUs(c.list, c.loopback)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("PlanCPUs(%q, %v) = %+v, %v; want %+v", c.list, c.loopback, got, err, c.want)
		}
	}
	if _, err := PlanCPUs(strconv.Itoa(n), false); err == nil || !strings.HasPrefix(err.Error(), "--cpu: CPU ") {
		t.Errorf("PlanCPUs of CPU %d (%d online): %v", n, n, err)
	}
}
