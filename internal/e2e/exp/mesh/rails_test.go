//go:build experiment

package mesh

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// TestMeshRails: a second NIC in each guest (rxe3 on mv0, a macvlan on
// eth0 with 203.0.113.129+i/25: more specific than dummy1's /24, so RoCE
// to it leaves by mv0; rxe refuses a VLAN netdev, EPERM) beside rxe2, then 'mesh --rail-devices rxe2,rxe3'
// under mpiexec: one matrix per rail and one document per rail
// (mesh-rails.rail0.json on rxe2, .rail1.json on rxe3), each complete, and
// a heatmap of each; then the same at once (--rails-parallel).
func TestMeshRails(t *testing.T) {
	inBed(t)
	b := newBed(t, vmtest.Binary(t))
	setup := [][]string{
		{"modprobe", "macvlan"},
		{"ip", "link", "add", "link", "eth0", "name", "mv0", "type", "macvlan", "mode", "bridge"},
		{"ip", "addr", "add", "ADDR/25", "dev", "mv0"},
		{"ip", "link", "set", "dev", "mv0", "up"},
		{"rdma", "link", "add", "rxe3", "type", "rxe", "netdev", "mv0"},
		{"sh", "-c", "for i in $(seq 100); do grep -q ACTIVE /sys/class/infiniband/rxe3/ports/1/state && exit 0; sleep 0.1; done; exit 1"},
	}
	for g := range 3 {
		addr := fmt.Sprintf("203.0.113.%d", 129+g)
		for _, c := range setup {
			args := make([]string, len(c))
			for i, a := range c {
				args[i] = strings.Replace(a, "ADDR", addr, 1)
			}
			var out []byte
			var err error
			if g == 0 {
				out, err = exec.CommandContext(b.ctx, args[0], args[1:]...).CombinedOutput()
			} else {
				out, err = expkit.Command(b.ctx, b.peers[g-1], args[0], args[1:]...).Output()
			}
			if err != nil {
				t.Fatalf("g%d: %s: %v: %s", g+1, strings.Join(args, " "), err, out)
			}
		}
	}
	fmt.Println("rails: rxe3 on mv0 (macvlan on eth0, 203.0.113.129-131/25) in g1, g2, g3")

	for _, c := range []struct {
		label string
		args  []string
	}{
		{"rails", []string{"--op", "write", "--mode", "lat,bw", "--size", "4K", "-n", "300"}},
		{"rails-parallel", []string{"--rails-parallel", "--op", "write", "--mode", "bw", "--size", "4K", "-n", "300"}},
	} {
		js := b.path("mesh-" + c.label + ".json")
		args := append([]string{"--rail-devices", "rxe2,rxe3", "--round-timeout", "60s", "--json", js}, c.args...)
		rc, _ := b.run(b.hydra(), c.label, "mesh-"+c.label+".txt", false, args...)
		text, _ := os.ReadFile(b.path("mesh-" + c.label + ".txt"))
		if rc != 0 {
			t.Fatalf("%s: mpiexec exit %d", c.label, rc)
		}
		for r, dev := range []string{"rxe2", "rxe3"} {
			if want := fmt.Sprintf("== rail %d: ", r); !strings.Contains(string(text), want) {
				t.Errorf("%s: no %q in the output", c.label, want)
			}
			path := strings.TrimSuffix(js, ".json") + fmt.Sprintf(".rail%d.json", r)
			modes := "modes=bw"
			if c.label == "rails" {
				modes = "modes=lat,bw"
			}
			b.check("complete", path, "3", "write", modes)
			doc, err := result.ReadMeshFile(path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, rk := range doc.Ranks {
				if rk.Device != dev {
					t.Errorf("%s: rank %d on %q, want %s (rail %d)", path, rk.Rank, rk.Device, dev, r)
				}
			}
			for _, p := range doc.Pairs {
				if p.Env == nil || p.Env.Device != dev {
					t.Errorf("%s: pair %s measured on %v, want %s", path, p.Name(), p.Env, dev)
				}
			}
			svg := b.path(fmt.Sprintf("heatmap-%s-rail%d.svg", c.label, r))
			if prc, o := b.rdmabench("plot", path, "--kind", "heatmap", "--op", "write", "--mode", "bw", "-o", svg); prc != 0 {
				t.Errorf("plot %s: exit %d: %s", filepath.Base(svg), prc, o)
			}
		}
	}
	fmt.Printf("mesh rails: passed, %s wall in the guests\n", expkit.Since(b.t0))
}
