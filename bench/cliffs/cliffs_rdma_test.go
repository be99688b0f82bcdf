package cliffs

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/testutil"
)

// TestRDMAPlantedMTUCliff makes a cliff on purpose and checks the search
// finds it: WRITE bandwidth tests on rxe with the path MTU set to 256 B
// (--mtu 256), along the message size 64..4096 B (×4). Up to 256 B a WRITE
// is one packet, at 1024 B four, at 4096 B sixteen: the message rate
// falls between 256 and 1024 B, where the size crosses the MTU. The first
// knee must lie in that ladder step (after the bisection, between 256 and
// its bracket's upper end), the packets per operation (sent_pkts) must be
// among the counters that moved, and the search must end within the time
// its plan announced. The ladder is ×4 because rxe's rate under TCG is
// noisy and its per-packet cost shows clearly only over several packets.
// About 40 s under TCG: it runs in 'make cliffs-test'
// (scripts/cliffs-test.sh), not in 'make test'.
func TestRDMAPlantedMTUCliff(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	dev := ctx.Name()
	const mtu = 256
	specAt := func(v int) (bench.Spec, error) {
		specs, err := bench.Plan{Template: bench.Spec{Duration: 500 * time.Millisecond, MTU: mtu}, Ops: []string{result.OpWrite},
			Modes: []string{result.ModeBW}, Sizes: []int{v}}.Specs()
		if err != nil {
			return bench.Spec{}, err
		}
		return specs[0], nil
	}
	rc := bench.RunConfig{Client: bench.ClientConfig{Device: dev, Port: 1, GIDIndex: -1, Run: bench.RunOptions{CPU: -1, Out: nil}},
		ConnTimeout: 5 * time.Second, CommandLine: []string{"cliffs.test"}}
	var device string
	var progress strings.Builder
	doc, err := Search(context.Background(), Config{Axis: AxisSize, Ladder: []int{64, 256, 1024, 4096}, SpecAt: specAt,
		Run: LoopbackRunner(rc, &device), Runs: 5, MaxBisections: 2, Progress: &progress, Role: "loopback"})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	doc.Device = device
	var rep strings.Builder
	WriteReport(&rep, doc)
	t.Logf("report:\n%s", rep.String())
	if dir := os.Getenv("RDMABENCH_CLIFFS_OUT"); dir != "" {
		if err := result.WriteCliffsJSON(dir+"/planted-mtu.json", doc); err != nil {
			t.Error(err)
		}
	}
	if len(doc.Knees) == 0 {
		t.Fatalf("no knee; planted at the path MTU %d B", mtu)
	}
	k := doc.Knees[0]
	if k.LadderBefore != mtu || k.LadderAfter != 4*mtu || k.Before < mtu || k.After > 4*mtu {
		t.Errorf("first knee %d..%d B (ladder step %d..%d); planted at %d/%d B, within the step %d..%d", k.Before, k.After,
			k.LadderBefore, k.LadderAfter, mtu, mtu+1, mtu, 4*mtu)
	}
	if doc.ElapsedNS > doc.EstimatedNS {
		t.Errorf("took %v; the plan announced at most %v", time.Duration(doc.ElapsedNS), time.Duration(doc.EstimatedNS))
	}
	var moved bool
	for _, c := range k.Counters {
		moved = moved || strings.HasSuffix(c.Name, "sent_pkts") || strings.HasSuffix(c.Name, "rcvd_pkts")
	}
	if !moved {
		t.Errorf("the knee's counters %+v lack the packets per operation that rose", k.Counters)
	}
}
