package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// NUMA placement from the CLI: a node that does not exist is a usage error
// naming the online nodes, before any device is opened. On a guest with two
// nodes (vmexec run --numa 2), a loopback run with --numa-node 1 records the
// placement in both sides' JSON environments and the header says it.

func init() {
	register(Case{Group: "numa", Name: "loopback-json-and-bad-node", Parallel: true, Run: func(t *Fx) error {
		online := strings.TrimSpace(readFile("/sys/devices/system/node/online"))
		if err := t.ExpectExit(2, 3*time.Second, []string{"--numa-node 4000: no such NUMA node (online: " + online + ")"},
			"loopback", "--numa-node", "4000", "--iters", "10"); err != nil {
			return err
		}
		if err := t.ExpectExit(2, 3*time.Second, []string{"--numa-node 4000: no such NUMA node (online: " + online + ")"},
			"server", "-p", fmt.Sprint(t.Port()), "--numa-node", "4000"); err != nil {
			return err
		}
		if online == "0" || online == "" {
			return nil // one node: the JSON part runs in a guest with two (vmexec --numa 2); a loopback costs 5 s here
		}
		out := filepath.Join(t.TempDir(), "numa.json")
		cpus := strings.TrimSpace(readFile("/sys/devices/system/node/node1/cpulist"))
		args := []string{"loopback", "--op", "send", "--mode", "lat", "--size", "64", "--iters", "200", "--json", out, "--numa-node", "1"}
		want := result.NUMAPlacement{Node: 1, Source: result.NUMASourceFlag, Reason: "--numa-node", CPUs: cpus, MemoryBound: true}
		line := "NUMA            : node 1 (--numa-node), engine on CPU"
		code, stdout, _ := t.Run(20*time.Second, args...)
		if code != 0 {
			return fmt.Errorf("loopback exited %d:\n%s", code, stdout)
		}
		if !strings.Contains(stdout, line) {
			return fmt.Errorf("the header lacks %q:\n%s", line, stdout)
		}
		var doc result.Document
		b, err := os.ReadFile(out)
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil {
			return err
		}
		for side, e := range map[string]*result.Env{"environment": &doc.Env, "server_environment": doc.ServerEnv} {
			if e == nil || e.NUMA == nil || *e.NUMA != want {
				got := "none"
				if e != nil && e.NUMA != nil {
					got = fmt.Sprintf("%+v", *e.NUMA)
				}
				return fmt.Errorf("%s.numa is %s, want %+v", side, got, want)
			}
		}
		return nil
	}})
}

// readFile is the content of path, or "" when it cannot be read.
func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
