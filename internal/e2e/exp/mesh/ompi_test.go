//go:build experiment

package mesh

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// TestOMPI is make mesh-ompi: Open MPI's mpirun (orterun) in g1 launches
// 'rdmabench mesh' on the three guests; it starts its daemon orted in g2 and
// g3 through its remote shell (plm_rsh_agent: the test binary's rsh helper,
// through the bed's agent, where the old bed had ssh); the ranks bootstrap
// through the orted's PMIx server, so the ranks run rdmabench built with
// -tags pmix ($RDMABENCH_PMIX_BIN, default rdmabench-pmix beside
// $RDMABENCH_BIN). MESH_OMPI_ARGS: the mesh's flags. Writes mesh.json.
func TestOMPI(t *testing.T) {
	inBed(t)
	for _, c := range []string{"orterun", "orted"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s not found (Debian packages openmpi-bin libpmix-dev: scripts/install-deps.sh --launchers)", c)
		}
	}
	bin := os.Getenv("RDMABENCH_PMIX_BIN")
	if bin == "" {
		bin = filepath.Join(filepath.Dir(vmtest.Binary(t)), "rdmabench-pmix")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v (go build -tags pmix -o build/rdmabench-pmix ./cmd/rdmabench)", err)
	}
	b := newBed(t, bin)
	args := strings.Fields(expkit.Str("MESH_OMPI_ARGS", "--op send,write --mode lat,bw --size 4K -n 400 --round-timeout 120s"))
	self := expkit.Self(t)
	mpirun := launcher{"mpirun", func(ctx context.Context, mesh []string) *exec.Cmd {
		c := exec.CommandContext(ctx, "orterun", append([]string{"--allow-run-as-root", "-np", fmt.Sprint(len(b.hosts)),
			"--host", strings.Join(b.hosts, ","), "--map-by", "node", "--mca", "plm_rsh_agent", self,
			"--mca", "oob_tcp_if_include", "eth0", "--mca", "plm_rsh_no_tree_spawn", "1"}, mesh...)...)
		c.Env = append(os.Environ(), expkit.HelperEnv+"=rsh")
		return c
	}}
	rc, _ := b.run(mpirun, "mesh", "mesh.txt", false, append(args, "--json", b.path("mesh.json"))...)
	if rc != 0 || !nonEmpty(b.path("mesh.json")) {
		t.Fatalf("MESH-OMPI FAIL: mpirun exit %d, mesh.json written: %v", rc, nonEmpty(b.path("mesh.json")))
	}
	b.check("complete", b.path("mesh.json"), "3", "send,write", "launcher=pmix")
	fmt.Printf("mesh-ompi: passed in %s: mesh.json\n", expkit.Since(b.t0))
}
