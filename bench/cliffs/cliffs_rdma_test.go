//go:build experiment

// Run by make cliffs-test (TestCliffs in internal/e2e/exp runs this package's
// test binary, built with -tags experiment, in the guest).

package cliffs

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
)

// TestRDMAPlantedLoadCliff makes a cliff on purpose with a load limit and
// checks the search finds it where it was made: WRITE bandwidth tests on
// rxe shaped in the C loop to at most 1000 messages/s (--limit-msgrate)
// and at most 512,000 B/s (--limit-bw; the lower wins), along the message
// size 64..1024 B (×2). Up to 512 B the message limit binds and the rate
// is flat; above it the byte limit does, and the rate falls to 500/s at
// 1024 B. The first knee must lie in the ladder step 512..1024 (after the
// bisection, within it), none before, and the search must end within the
// time its plan announced.
//
// A limit, not the path MTU: rxe's unshaped rate under TCG on a loaded
// host varies by a factor of 10 from run to run, which hides the MTU's
// step (the packets per operation, in the counters, do show it); shaped
// rates hold. About 50 s under TCG: it runs in 'make cliffs-test'
// (TestCliffs in internal/e2e/exp), not in 'make test' (build tag).
func TestRDMAPlantedLoadCliff(t *testing.T) {
	if os.Getenv("RDMABENCH_CLIFFS_OUT") == "" {
		t.Fatal("RDMABENCH_CLIFFS_OUT is not set: the planted cliff runs in make cliffs-test (a 3 GiB guest; TestCliffs sets it)")
	}
	ctx := testutil.RequireRDMA(t)
	dev := ctx.Name()
	const rate, cliff = 1000, 512
	specAt := func(v int) (spec.Spec, error) {
		specs, err := spec.Plan{Template: spec.Spec{Duration: 500 * time.Millisecond, LimitMsgRate: rate, LimitBW: rate * cliff},
			Ops: []string{result.OpWrite}, Modes: []string{result.ModeBW}, Sizes: []int{v}}.Specs()
		if err != nil {
			return spec.Spec{}, err
		}
		return specs[0], nil
	}
	rc := bench.RunConfig{Client: bench.ClientConfig{Device: dev, Port: 1, GIDIndex: -1, Run: measure.Options{CPU: -1}},
		ConnTimeout: 5 * time.Second, CommandLine: []string{"cliffs.test"}}
	var device string
	var progress strings.Builder
	doc, err := Search(context.Background(), Config{Axis: AxisSize, Ladder: []int{64, 128, 256, 512, 1024}, SpecAt: specAt,
		Run: LoopbackRunner(rc, &device), Runs: 5, MaxBisections: 3, Progress: &progress, Role: "loopback"})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	doc.Device = device
	var rep strings.Builder
	WriteReport(&rep, doc)
	t.Logf("report:\n%s", rep.String())
	if dir := os.Getenv("RDMABENCH_CLIFFS_OUT"); dir != "" {
		if err := result.WriteCliffsJSON(dir+"/planted-limit.json", doc); err != nil {
			t.Error(err)
		}
	}
	if len(doc.Knees) == 0 {
		t.Fatalf("no knee; planted at %d B", cliff)
	}
	k := doc.Knees[0]
	if k.LadderBefore != cliff || k.LadderAfter != 2*cliff || k.Before < cliff || k.After > 2*cliff {
		t.Errorf("first knee %d..%d B (ladder step %d..%d); planted at %d B, within the step %d..%d", k.Before, k.After,
			k.LadderBefore, k.LadderAfter, cliff, cliff, 2*cliff)
	}
	if doc.ElapsedNS > doc.EstimatedNS {
		t.Errorf("took %v; the plan announced at most %v", time.Duration(doc.ElapsedNS), time.Duration(doc.EstimatedNS))
	}
}
