package bench

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/numa"
	"github.com/rdmabench/rdmabench/verbs"
)

// requireNUMA skips without two online NUMA nodes and returns them.
func requireNUMA(t *testing.T) []int {
	t.Helper()
	nodes, err := numa.Online()
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) < 2 {
		t.Skipf("needs a machine with 2 NUMA nodes (online: %s); boot the guest with vmexec --numa 2", numa.FormatList(nodes))
	}
	return nodes
}

// TestRDMANUMAMemory registers a test's pools (measured and load) under
// --numa-node N for each online node, twice over, and reads back the node
// of every page of every buffer.
func TestRDMANUMAMemory(t *testing.T) {
	requireDevice(t)
	nodes := requireNUMA(t)
	dev, err := device.Open("", 1, -1, netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	s := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeLat}, Sizes: []int{3 * 4096},
		Template: spec.Spec{Iters: 100, Warmup: -1, Load: &spec.Load{QPs: 2, Op: result.OpWrite, Size: 8192}}})[0]
	for _, node := range append(nodes, nodes...) { // nodes in turn: no thread's locality passes by chance
		dev.Place(device.NUMAChoice{Node: node, Set: true})
		if p := dev.NUMA(); p.Node != node || p.Source != result.NUMASourceFlag || !p.MemoryBound {
			t.Fatalf("placement %+v, want node %d from the flag, bound", p, node)
		}
		m, err := endpoint.NewMemory(dev, s, true)
		if err != nil {
			t.Fatal(err)
		}
		pages, wrong := 0, map[int]int{}
		var out []*verbs.PoolBuf
		for _, pool := range []*verbs.Pool{m.Measured, m.Load} {
			for range pool.Config().Count {
				b, err := pool.Get()
				if err != nil {
					t.Fatal(err)
				}
				for off := uint64(0); off < b.Len(); off += 4096 {
					n, err := numa.NodeOf(uintptr(b.Addr() + off))
					if err != nil {
						t.Fatal(err)
					}
					pages++
					if n != node {
						wrong[n]++
					}
				}
				out = append(out, b)
			}
		}
		for _, b := range out {
			b.Put()
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if len(wrong) > 0 {
			t.Errorf("--numa-node %d: of %d pages, these are on other nodes (node: pages): %v", node, pages, wrong)
		} else {
			t.Logf("--numa-node %d: all %d pages of the pools on node %d", node, pages, node)
		}
	}
}

// TestRDMANUMAPlacement runs a loopback latency test with --numa-node set
// to the last online node and checks, while it runs, that threads (the
// client's engine and the server's responder) are pinned to exactly that
// node's CPUs, which none is before, and that both environments record the
// placement.
func TestRDMANUMAPlacement(t *testing.T) {
	requireDevice(t)
	nodes := requireNUMA(t)
	node := nodes[len(nodes)-1]
	cpus, err := numa.CPUs(node)
	if err != nil || len(cpus) == 0 {
		t.Fatalf("node %d CPUs %v, %v", node, cpus, err)
	}
	want := numa.FormatList(cpus)
	if n := threadsPinnedTo(t, want); n != 0 {
		t.Fatalf("%d threads pinned to %s before the test", n, want)
	}
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Sizes: []int{64},
		Template: spec.Spec{Duration: 1500 * time.Millisecond, WarmupTime: 100 * time.Millisecond}})
	cfg := runCfg(specs)
	cfg.Client.NUMA = device.NUMAChoice{Node: node, Set: true}
	var mu sync.Mutex
	most := 0
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			n := threadsPinnedTo(t, want)
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, doc, specs)
	if most < 2 {
		t.Errorf("at most %d threads pinned to node %d's CPUs %s during the test, want 2 (engine and responder)", most, node, want)
	}
	wantRec := result.NUMAPlacement{Node: node, Source: result.NUMASourceFlag, Reason: "--numa-node", CPUs: want, MemoryBound: true}
	for side, e := range map[string]*result.Env{"client": &doc.Env, "server": doc.ServerEnv} {
		if e == nil || e.NUMA == nil || *e.NUMA != wantRec {
			t.Errorf("%s environment's numa: %+v, want %+v", side, e, wantRec)
		}
	}
	t.Logf("%d threads pinned to node %d's CPUs %s during the test; p50 %s us", most, node, want, doc.Results[0].Latency.P50.US())
}

// threadsPinnedTo counts this process's threads whose Cpus_allowed_list
// is cpus.
func threadsPinnedTo(t *testing.T, cpus string) int {
	t.Helper()
	files, _ := filepath.Glob("/proc/self/task/*/status")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) == cpus {
				n++
			}
		}
	}
	return n
}
