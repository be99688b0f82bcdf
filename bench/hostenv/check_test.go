package hostenv

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/numa"

	"golang.org/x/sys/unix"
)

// fakeEnvCheck points CheckEnv at a fake tree built from files (path under
// the root → content; a path ending in "/" is an empty directory), at arch
// and at a memlock limit, until the test ends.
func fakeEnvCheck(t *testing.T, files map[string]string, arch string, lim unix.Rlimit, limErr error) {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		dir := filepath.Dir(full)
		if strings.HasSuffix(p, "/") {
			dir = full
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(p, "/") {
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	oldRoot, oldArch, oldLimit := sysRoot, goarch, memlockLimit
	t.Cleanup(func() { sysRoot, goarch, memlockLimit = oldRoot, oldArch, oldLimit })
	sysRoot, goarch = root, arch
	memlockLimit = func() (unix.Rlimit, error) { return lim, limErr }
}

var unlimited = unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}

// baseChecks is what CheckEnv reports on an empty tree with unlimited memlock.
func baseChecks() result.EnvChecks {
	return result.EnvChecks{Governors: []string{noCPUFreq}, DeviceNUMANode: -1, CPUNUMANode: -1,
		MemlockSoftBytes: -1, MemlockHardBytes: -1}
}

func TestEnvCheck(t *testing.T) {
	const (
		cpu      = "sys/devices/system/cpu/"
		node     = "sys/devices/system/node/"
		ib       = "sys/class/infiniband/"
		cpuinfo  = "proc/cpuinfo"
		status   = "proc/self/status"
		clocksrc = "sys/devices/system/clocksource/clocksource0/current_clocksource"
		invFlags = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n\nprocessor\t: 1\nflags\t\t: fpu\n"
		oldFlags = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp\n"
	)
	numa := map[string]string{
		ib + "mlx5_0/device/numa_node": "1\n",
		node + "node0/cpulist":         "0-7\n",
		node + "node1/cpulist":         "8-15\n",
		cpu + "cpu3/node0/":            "",
		cpu + "cpu9/node1/":            "",
	}
	tests := []struct {
		name     string
		files    map[string]string
		arch     string
		dev      string
		pinned   int
		lim      unix.Rlimit
		limErr   error
		want     func(*result.EnvChecks)
		wantWarn []string // substrings, one per expected warning, in order
	}{{
		name: "everything absent", arch: "amd64", dev: "rxe0", pinned: 2, lim: unlimited,
	}, {
		name: "getrlimit fails", arch: "amd64", pinned: -1, limErr: errors.New("no"),
		want: func(c *result.EnvChecks) { c.MemlockSoftBytes, c.MemlockHardBytes = 0, 0 },
	}, {
		name: "governor powersave on 2 of 4 CPUs", arch: "amd64", pinned: -1, lim: unlimited,
		files: map[string]string{
			cpu + "cpu0/cpufreq/scaling_governor": "performance\n",
			cpu + "cpu1/cpufreq/scaling_governor": "powersave\n",
			cpu + "cpu2/cpufreq/scaling_governor": "performance\n",
			cpu + "cpu3/cpufreq/scaling_governor": "powersave\n",
		},
		want:     func(c *result.EnvChecks) { c.Governors = []string{"performance", "powersave"} },
		wantWarn: []string{"governor is powersave on CPU 1,3 (of 4 CPUs)"},
	}, {
		name: "governor performance everywhere", arch: "amd64", pinned: -1, lim: unlimited,
		files: map[string]string{
			cpu + "cpu0/cpufreq/scaling_governor": "performance\n",
			cpu + "cpu1/cpufreq/scaling_governor": "performance\n",
			cpu + "cpu1/":                         "",
		},
		want: func(c *result.EnvChecks) { c.Governors = []string{"performance"} },
	}, {
		name: "invariant TSC", arch: "amd64", pinned: -1, lim: unlimited,
		files: map[string]string{cpuinfo: invFlags, clocksrc: "tsc\n"},
		want:  func(c *result.EnvChecks) { c.InvariantTSC = true },
	}, {
		name: "no invariant TSC, clocksource hpet", arch: "amd64", pinned: -1, lim: unlimited,
		files:    map[string]string{cpuinfo: oldFlags, clocksrc: "hpet\n"},
		wantWarn: []string{"lack nonstop_tsc): rdmabench times with CLOCK_MONOTONIC_RAW"},
	}, {
		name: "no invariant TSC, clocksource tsc", arch: "386", pinned: -1, lim: unlimited,
		files:    map[string]string{cpuinfo: oldFlags, clocksrc: "tsc\n"},
		wantWarn: []string{"now tsc, which the kernel may drop as unstable"},
	}, {
		name: "no TSC flags on arm64", arch: "arm64", pinned: -1, lim: unlimited,
		files: map[string]string{cpuinfo: "processor\t: 0\nFeatures\t: fp asimd\n", clocksrc: "arch_sys_counter\n"},
	}, {
		name: "SMT on, pinned CPU has an online sibling", arch: "amd64", pinned: 2, lim: unlimited,
		files: map[string]string{
			cpu + "smt/active": "1\n",
			cpu + "online":     "0-7\n",
			cpu + "cpu2/topology/thread_siblings_list": "2,6\n",
		},
		want:     func(c *result.EnvChecks) { c.SMTActive, c.PinnedCPUSiblings = true, "6" },
		wantWarn: []string{"CPU 2, where the engine thread is pinned, shares its core with CPU 6"},
	}, {
		name: "SMT on, sibling offline", arch: "amd64", pinned: 2, lim: unlimited,
		files: map[string]string{
			cpu + "smt/active": "1\n",
			cpu + "online":     "0-5\n",
			cpu + "cpu2/topology/thread_siblings_list": "2,6\n",
		},
		want: func(c *result.EnvChecks) { c.SMTActive = true },
	}, {
		name: "SMT on, not pinned", arch: "amd64", pinned: -1, lim: unlimited,
		files: map[string]string{cpu + "smt/active": "1\n", cpu + "cpu2/topology/thread_siblings_list": "2,6\n"},
		want:  func(c *result.EnvChecks) { c.SMTActive = true },
	}, {
		name: "NUMA mismatch", arch: "amd64", dev: "mlx5_0", pinned: 3, lim: unlimited, files: numa,
		want: func(c *result.EnvChecks) { c.DeviceNUMANode, c.CPUNUMANode, c.DeviceNodeCPUs = 1, 0, "8-15" },
		wantWarn: []string{"engine pinned to CPU 3 on NUMA node 0, mlx5_0 is on node 1: cross-node traffic adds latency; " +
			"pin with --cpu to a CPU of node 1: 8-15"},
	}, {
		name: "NUMA match", arch: "amd64", dev: "mlx5_0", pinned: 9, lim: unlimited, files: numa,
		want: func(c *result.EnvChecks) { c.DeviceNUMANode, c.CPUNUMANode, c.DeviceNodeCPUs = 1, 1, "8-15" },
	}, {
		name: "NUMA not pinned, two nodes", arch: "amd64", dev: "mlx5_0", pinned: -1, lim: unlimited, files: numa,
		want:     func(c *result.EnvChecks) { c.DeviceNUMANode, c.DeviceNodeCPUs = 1, "8-15" },
		wantWarn: []string{"mlx5_0 is on NUMA node 1 of 2"},
	}, {
		name: "NUMA not pinned, one node", arch: "amd64", dev: "mlx5_0", pinned: -1, lim: unlimited,
		files: map[string]string{ib + "mlx5_0/device/numa_node": "0\n", node + "node0/cpulist": "0-3\n"},
		want:  func(c *result.EnvChecks) { c.DeviceNUMANode, c.DeviceNodeCPUs = 0, "0-3" },
	}, {
		name: "software device, no node", arch: "amd64", dev: "rxe0", pinned: 3, lim: unlimited,
		files: map[string]string{ib + "rxe0/device/numa_node": "-1\n", cpu + "cpu3/node0/": ""},
		want:  func(c *result.EnvChecks) { c.CPUNUMANode = 0 },
	}, {
		name: "memlock 64 KiB without CAP_IPC_LOCK", arch: "amd64", pinned: -1, lim: unix.Rlimit{Cur: 64 << 10, Max: 64 << 10},
		files:    map[string]string{status: "Name:\trdmabench\nCapEff:\t0000000000000000\n"},
		want:     func(c *result.EnvChecks) { c.MemlockSoftBytes, c.MemlockHardBytes = 64<<10, 64<<10 },
		wantWarn: []string{"RLIMIT_MEMLOCK) is 64 KiB (hard limit 64 KiB) and the process lacks CAP_IPC_LOCK"},
	}, {
		name: "memlock 64 KiB with CAP_IPC_LOCK", arch: "amd64", pinned: -1, lim: unix.Rlimit{Cur: 64 << 10, Max: unix.RLIM_INFINITY},
		files: map[string]string{status: "Name:\trdmabench\nCapEff:\t0000000000004000\n"},
		want: func(c *result.EnvChecks) {
			c.MemlockSoftBytes, c.MemlockHardBytes, c.CapIPCLock = 64<<10, -1, true
		},
	}, {
		name: "memlock 64 MiB", arch: "amd64", pinned: -1, lim: unix.Rlimit{Cur: 64 << 20, Max: 64 << 20},
		files: map[string]string{status: "CapEff:\t0000000000000000\n"},
		want:  func(c *result.EnvChecks) { c.MemlockSoftBytes, c.MemlockHardBytes = 64<<20, 64<<20 },
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeEnvCheck(t, tt.files, tt.arch, tt.lim, tt.limErr)
			got, warns := CheckEnv(tt.dev, tt.pinned)
			for _, w := range warns {
				t.Log(w)
			}
			want := baseChecks()
			if tt.want != nil {
				tt.want(&want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("checks\n got %+v\nwant %+v", got, want)
			}
			if len(warns) != len(tt.wantWarn) {
				t.Fatalf("got %d warnings %q, want %d", len(warns), warns, len(tt.wantWarn))
			}
			for i, w := range tt.wantWarn {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warns[i], w)
				}
			}
		})
	}
}

func TestEnvCheckCPUList(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int
		ok   bool
		out  string
	}{
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}, true, "0-3,8,10-11"},
		{"2,6", []int{2, 6}, true, "2,6"},
		{"5", []int{5}, true, "5"},
		{"", nil, false, ""},
		{"3-1", nil, false, ""},
		{"x", nil, false, ""},
		{"9223372036854775806-9223372036854775807", nil, false, ""}, // no endless loop
	} {
		got, ok := parseCPUList(tt.in)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v, want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if s := numa.FormatList(got); s != tt.out {
			t.Errorf("numa.FormatList(%v) = %q, want %q", got, s, tt.out)
		}
	}
	for b, want := range map[int64]string{-1: "unlimited", 65536: "64 KiB", 8 << 20: "8 MiB", 1000: "1000 bytes", 0: "0 bytes"} {
		if got := formatLimit(b); got != want {
			t.Errorf("formatLimit(%d) = %q, want %q", b, got, want)
		}
	}
}

func TestEnvCheckJSON(t *testing.T) {
	b, err := json.Marshal(baseChecks())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"governors", "invariant_tsc", "smt_active", "device_numa_node", "cpu_numa_node",
		"memlock_soft_bytes", "memlock_hard_bytes", "cap_ipc_lock"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s lacks %q", b, k)
		}
	}
}

// TestEnvCheckLive runs CheckEnv on this host: it must not panic and must
// always report the governors.
func TestEnvCheckLive(t *testing.T) {
	c, warns := CheckEnv("rxe0", 0)
	if len(c.Governors) == 0 {
		t.Errorf("no governors: %+v", c)
	}
	t.Logf("%+v", c)
	for _, w := range warns {
		t.Log(w)
	}
}

// TestOnlineCPUs: a --cpu list is checked against the CPUs online, not the
// process's affinity (under taskset -c 1, CPU 1 must still be accepted).
func TestOnlineCPUs(t *testing.T) {
	for _, c := range []struct {
		list string
		want int
	}{
		{"0-1", 2},
		{"0-3,8", 9},
		{"1", 2},
		{"", runtime.NumCPU()},
		{"garbage", runtime.NumCPU()},
	} {
		if got := onlineCPUs(c.list); got != c.want {
			t.Errorf("onlineCPUs(%q) = %d, want %d", c.list, got, c.want)
		}
	}
}
