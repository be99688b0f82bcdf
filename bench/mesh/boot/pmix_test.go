//go:build pmix && cgo

package boot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestUnderOpenMPI runs this test binary as 3 ranks under Open MPI's mpirun
// (a PMIx launcher) when it is installed.
func TestUnderOpenMPI(t *testing.T) {
	if os.Getenv("PMIX_NAMESPACE") != "" {
		return
	}
	mpirun, err := exec.LookPath("mpirun.openmpi")
	if err != nil {
		t.Skip("mpirun.openmpi not installed (Debian package openmpi-bin)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3",
		os.Args[0], "-test.run", "^TestPMIxRank$", "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "PMIX-RANK-OK"); n != 3 {
		t.Fatalf("%d ranks passed, want 3:\n%s", n, out)
	}
}

func TestPMIxRank(t *testing.T) {
	if os.Getenv("PMIX_NAMESPACE") == "" {
		t.Skip("run by TestUnderOpenMPI under mpirun")
	}
	b, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all, err := b.Allgather(ctx, "t", []byte(fmt.Sprintf("rank-%d", b.Rank())))
	if err != nil {
		t.Fatal(err)
	}
	for r, v := range all {
		if string(v) != fmt.Sprintf("rank-%d", r) {
			t.Fatalf("rank %d's value %q", r, v)
		}
	}
	if err := b.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("PMIX-RANK-OK %d of %d (%s)\n", b.Rank(), b.Size(), b.Launcher())
	b.Close()
}
