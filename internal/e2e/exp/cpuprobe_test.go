//go:build experiment

package exp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCPUProbe shows where each side's CPU goes during a 64 KiB RDMA WRITE
// bandwidth test over rxe0, rdmabench (server + run) against perftest's
// ib_write_bw: per thread of both processes, the CPU time (schedstat), time
// slices, voluntary and involuntary context switches and the syscall it sits
// in (35 nanosleep: Go's sysmon; 202 futex; 281 epoll_pwait: the netpoller;
// 7 poll: the async-event watcher), over a window inside the timed phase;
// both guest CPUs' busy time; the busiest threads of the whole guest; and
// rxe0's counters per run. The clients run on CPU 1. Under TCG, wall-clock
// percentages run over 100; compare the counts. A diagnostic, in no make
// target:
//
//	build/vmexec run -- build/exp.test -test.run '^TestCPUProbe$' -test.v
//
// CPU_PROBE_D: test seconds (10); CPU_PROBE_A, CPU_PROBE_B: the window (3-8 s
// after the client starts); CPU_PROBE_ORDER (e.g. "rb pt rb");
// CPU_PROBE_RBFLAGS: more flags of rdmabench run; CPU_PROBE_RBENV: the
// environment of both rdmabench processes (e.g. GOMAXPROCS=1).
func TestCPUProbe(t *testing.T) {
	requireBed(t)
	bin := rdmabench(t)
	d := envInt(t, "CPU_PROBE_D", 10)
	a := envInt(t, "CPU_PROBE_A", 3)
	b := envInt(t, "CPU_PROBE_B", 8)
	if b <= a || b >= d {
		t.Fatalf("want CPU_PROBE_A < CPU_PROBE_B < CPU_PROBE_D, got %d, %d, %d", a, b, d)
	}
	order := strings.Fields(envStr("CPU_PROBE_ORDER", "rb pt rb"))
	rbenv := strings.Fields(os.Getenv("CPU_PROBE_RBENV"))
	tmp := t.TempDir()
	limit := time.Duration(d+60) * time.Second
	ds := fmt.Sprint(d)
	pt := []string{"-d", "rxe0", "-x", "1", "-s", "65536", "-D", ds, "-t", "128", "-Q", "1", "-u", "14"}
	rb := append([]string{"--op", "write", "--mode", "bw", "--size", "64K", "-D", ds, "-t", "128", "-Q", "1", "-u", "14"},
		strings.Fields(os.Getenv("CPU_PROBE_RBFLAGS"))...)
	onCPU1 := func(p *proc) {
		var set unix.CPUSet
		set.Set(1)
		if err := unix.SchedSetaffinity(p.cmd.Process.Pid, &set); err != nil {
			t.Logf("client on CPU 1: %v", err)
		}
	}
	// window prints the threads of the server and the client, the CPUs and
	// the busiest threads over the window A..B s after the client started.
	window := func(label string, srv, cli *proc) {
		time.Sleep(time.Duration(a) * time.Second) // the measurement's window: a fixed time by design
		s0, c0, g0, a0 := threads(srv.cmd.Process.Pid), threads(cli.cmd.Process.Pid), cpuTimes(), allThreads()
		time.Sleep(time.Duration(b-a) * time.Second)
		s1, c1, g1, a1 := threads(srv.cmd.Process.Pid), threads(cli.cmd.Process.Pid), cpuTimes(), allThreads()
		secs := float64(b - a)
		fmt.Printf("== %s: window %d-%ds\n", label, a, b)
		printThreads("server", s0, s1, secs)
		printThreads("client", c0, c1, secs)
		printCPUs(g0, g1, secs)
		printTop(a0, a1, secs)
	}
	row := regexp.MustCompile(`^ *65536`)
	for _, who := range order {
		k0 := counters("rxe0")
		switch {
		case who == "pt":
			ib := lookPath(t, "ib_write_bw")
			so := create(t, filepath.Join(tmp, "pts.txt"))
			srv, err := start(limit, so, so, nil, ib, pt...)
			if err != nil {
				t.Fatal(err)
			}
			if err := waitListen(18515, 30*time.Second); err != nil {
				t.Fatalf("ib_write_bw server: %v", err)
			}
			co := create(t, filepath.Join(tmp, "ptc.txt"))
			cli, err := start(limit, co, co, nil, ib, append(pt, "127.0.0.1")...)
			if err != nil {
				t.Fatal(err)
			}
			onCPU1(cli)
			window("pt", srv, cli)
			if rc := cli.wait(); rc != 0 {
				t.Errorf("ib_write_bw client: exit %d", rc)
			}
			srv.wait()
			for _, l := range strings.Split(readFile(filepath.Join(tmp, "ptc.txt")), "\n") {
				if row.MatchString(l) {
					fmt.Println(l)
				}
			}
		case strings.HasPrefix(who, "rb"):
			so := create(t, filepath.Join(tmp, "rbs.txt"))
			srv, err := start(limit*3, so, so, rbenv, bin, "server", "-d", "rxe0", "-x", "1", "-p", "18600")
			if err != nil {
				t.Fatal(err)
			}
			if err := waitListen(18600, 30*time.Second); err != nil {
				srv.stop()
				t.Fatalf("rdmabench server: %v", err)
			}
			i0 := threads(srv.cmd.Process.Pid)
			time.Sleep(2 * time.Second) // the idle server's window
			i1 := threads(srv.cmd.Process.Pid)
			fmt.Println("== rb server idle 2s")
			printThreads("idle", i0, i1, 2)
			cf := filepath.Join(tmp, "rbc.txt")
			co := create(t, cf)
			cli, err := start(limit, co, co, rbenv, bin, append(append([]string{"run", "127.0.0.1", "-p", "18600", "-d", "rxe0", "-x", "1"}, rb...),
				"--json", filepath.Join(tmp, "rb.json"))...)
			if err != nil {
				t.Fatal(err)
			}
			onCPU1(cli)
			window(who, srv, cli)
			if rc := cli.wait(); rc != 0 {
				t.Errorf("rdmabench run: exit %d:\n%s", rc, readFile(cf))
			}
			n := 0
			for _, l := range strings.Split(readFile(cf), "\n") {
				if n < 5 && (strings.Contains(l, "MiB") || strings.Contains(l, "write")) {
					fmt.Println(l)
					n++
				}
			}
			srv.stop()
		default:
			t.Fatalf("CPU_PROBE_ORDER: %q is neither pt nor rb...", who)
		}
		printCounters("rxe0", k0, counters("rxe0"))
	}
}

// thread is one thread's figures at one moment.
type thread struct {
	runtime, slices, vol, nonvol int64
	syscall, comm                string
}

// threads reads every thread of process pid: schedstat (run time ns, wait
// time, time slices), the context switches and the syscall it sits in.
func threads(pid int) map[string]thread {
	m := map[string]thread{}
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, dir := range dirs {
		var th thread
		if f := strings.Fields(readFile(dir + "/schedstat")); len(f) >= 3 {
			th.runtime, _ = strconv.ParseInt(f[0], 10, 64)
			th.slices, _ = strconv.ParseInt(f[2], 10, 64)
		} else {
			continue
		}
		for _, l := range strings.Split(readFile(dir+"/status"), "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				switch f[0] {
				case "voluntary_ctxt_switches:":
					th.vol, _ = strconv.ParseInt(f[1], 10, 64)
				case "nonvoluntary_ctxt_switches:":
					th.nonvol, _ = strconv.ParseInt(f[1], 10, 64)
				}
			}
		}
		if f := strings.Fields(readFile(dir + "/syscall")); len(f) > 0 {
			th.syscall = f[0]
		}
		m[filepath.Base(dir)] = th
	}
	return m
}

// allThreads reads every thread of the guest: its run time and name.
func allThreads() map[string]thread {
	m := map[string]thread{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/task/*")
	for _, dir := range dirs {
		f := strings.Fields(readFile(dir + "/schedstat"))
		if len(f) == 0 {
			continue
		}
		rt, _ := strconv.ParseInt(f[0], 10, 64)
		m[filepath.Base(dir)] = thread{runtime: rt, comm: strings.TrimSpace(readFile(dir + "/comm"))}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		a, _ := strconv.Atoi(ks[i])
		b, _ := strconv.Atoi(ks[j])
		return a < b
	})
	return ks
}

// printThreads prints each thread that ran more than 0.3 ms between s0 and
// s1 (secs apart), and the process's total, in % of one CPU.
func printThreads(label string, s0, s1 map[string]thread, secs float64) {
	var tot int64
	for _, tid := range sortedKeys(s1) {
		x, y := s0[tid], s1[tid]
		dr := y.runtime - x.runtime
		tot += dr
		if dr > 300000 {
			fmt.Printf("  %s tid %s: %.1f%% cpu, %d slices, vol %d nonvol %d, in syscall %s\n", label, tid, float64(dr)/1e7/secs,
				y.slices-x.slices, y.vol-x.vol, y.nonvol-x.nonvol, y.syscall)
		}
	}
	fmt.Printf("  %s total: %.1f%% of one cpu (%d threads)\n", label, float64(tot)/1e7/secs, len(s1))
}

// printTop prints the 12 busiest threads of the guest (more than 4 ms).
func printTop(a0, a1 map[string]thread, secs float64) {
	type busy struct {
		pct       float64
		tid, comm string
	}
	var bs []busy
	for tid, y := range a1 {
		if d := y.runtime - a0[tid].runtime; d > 4000000 {
			bs = append(bs, busy{float64(d) / 1e7 / secs, tid, y.comm})
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].pct > bs[j].pct })
	for i, b := range bs {
		if i == 12 {
			break
		}
		fmt.Printf("  top: %.1f %s %s\n", b.pct, b.tid, b.comm)
	}
}

// cpuTimes reads /proc/stat's cpuN lines: busy (user, nice, system, irq,
// softirq), irq and softirq, in ticks (1/100 s).
func cpuTimes() map[string][3]int64 {
	m := map[string][3]int64{}
	for _, l := range strings.Split(readFile("/proc/stat"), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		v := make([]int64, 8)
		for i := 1; i < 8; i++ {
			v[i], _ = strconv.ParseInt(f[i], 10, 64)
		}
		m[f[0]] = [3]int64{v[1] + v[2] + v[3] + v[6] + v[7], v[6], v[7]}
	}
	return m
}

func printCPUs(g0, g1 map[string][3]int64, secs float64) {
	for _, c := range sortedKeys(g1) {
		x, y := g0[c], g1[c]
		fmt.Printf("  guest %s busy %.1f%% (irq+softirq %.1f%%)\n", c, float64(y[0]-x[0])/secs, float64(y[1]-x[1]+y[2]-x[2])/secs)
	}
}

// counters reads a device's port 1 hardware counters.
func counters(dev string) map[string]int64 {
	m := map[string]int64{}
	fs, _ := filepath.Glob("/sys/class/infiniband/" + dev + "/ports/1/hw_counters/*")
	for _, f := range fs {
		if v, err := strconv.ParseInt(strings.TrimSpace(readFile(f)), 10, 64); err == nil {
			m[filepath.Base(f)] = v
		}
	}
	return m
}

func printCounters(dev string, k0, k1 map[string]int64) {
	var b strings.Builder
	names := make([]string, 0, len(k1))
	for n := range k1 {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := k1[n] - k0[n]; d != 0 {
			fmt.Fprintf(&b, " %s +%d", n, d)
		}
	}
	fmt.Printf("  %s:%s\n", dev, b.String())
}
