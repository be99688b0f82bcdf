package cliffs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// These tests drive Search with a synthetic runner (a curve with noise):
// the search's logic, not the engine. The real path runs in the guest
// (make cliffs-test: TestCliffs in internal/e2e/exp).

// fakeRun is a runner whose message rate at axis value v is curve(v), 3 %
// noise per run, and whose retransmissions per operation are retrans(v).
func fakeRun(t *testing.T, curve func(v int) float64, retrans func(v int) float64, calls *[]int) Runner {
	rng := rand.New(rand.NewPCG(7, 8))
	return func(ctx context.Context, s spec.Spec) (result.Result, []string, error) {
		v := s.QPs
		*calls = append(*calls, v)
		r := result.Result{Op: s.Op, Mode: s.Mode, SizeBytes: s.Size}
		for range s.Repeat {
			mpps := curve(v) * (1 + 0.03*rng.NormFloat64())
			r.Runs = append(r.Runs, result.RunFigures{Iterations: 1000, Bandwidth: result.Bandwidth{Mpps: mpps}})
			r.Iterations += 1000
		}
		d := map[string]int64{"hw_counters/sent_pkts": 1000}
		if retrans != nil {
			if n := int64(retrans(v) * 1000); n > 0 {
				d["hw_counters/completer_retry_err"] = n
			}
		}
		r.Counters = &result.CounterDeltas{Client: &result.PortCounters{Device: "rxe0", Port: 1, Deltas: d}}
		return r, nil, nil
	}
}

func qpSpec(v int) (spec.Spec, error) {
	if v > 256 {
		return spec.Spec{}, fmt.Errorf("QPs %d out of range 1..256 (--qps)", v)
	}
	return spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 64, QPs: v, Duration: time.Second}, nil
}

// TestSearchFindsPlantedCliff plants a fall of the message rate between
// 40 and 41 QPs: the ladder (×2) sees it between 32 and 64, the bisection
// narrows it to a bracket that holds 40..41, and the retransmissions that
// start there are the knee's counter.
func TestSearchFindsPlantedCliff(t *testing.T) {
	var calls []int
	cliff := func(v int) float64 {
		if v > 40 {
			return 0.5
		}
		return 1
	}
	retrans := func(v int) float64 {
		if v > 40 {
			return 0.02
		}
		return 0
	}
	lad, err := Ladder(1, 256, 2)
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	doc, err := Search(context.Background(), Config{Axis: AxisQPs, Ladder: lad, SpecAt: qpSpec, Run: fakeRun(t, cliff, retrans, &calls),
		MaxBisections: 3, Progress: &progress, Role: "loopback", Device: "rxe0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Knees) != 1 {
		t.Fatalf("knees %+v", doc.Knees)
	}
	k := doc.Knees[0]
	if !(k.Before <= 40 && k.After >= 41 && k.LadderBefore == 32 && k.LadderAfter == 64) {
		t.Errorf("knee %+v; planted between 40 and 41", k)
	}
	if k.After-k.Before > 8 {
		t.Errorf("bisection left a bracket of %d..%d", k.Before, k.After)
	}
	if k.DropCI == nil || !(k.DropCI.Low < 0.5 && 0.5 < k.DropCI.High) || k.Drop < 0.4 || k.Drop > 0.6 {
		t.Errorf("drop %g, interval %+v; planted 0.5", k.Drop, k.DropCI)
	}
	if len(k.Counters) != 1 || k.Counters[0].Name != "hw_counters/completer_retry_err" || k.Counters[0].Trouble != result.TroubleRetransmissions ||
		k.Counters[0].PerOpAfter != 0.02 {
		t.Errorf("counters %+v", k.Counters)
	}
	if len(calls) != len(lad)+3 || doc.MaxPoints != len(lad)+3*RefinedFalls {
		t.Errorf("points %v (max %d)", calls, doc.MaxPoints)
	}
	if doc.NoKneeUpTo != nil || doc.Partial || doc.EstimatedNS <= 0 || doc.Figure != "mpps" || doc.LowerIsBetter {
		t.Errorf("doc %+v", doc)
	}
	for i := 1; i < len(doc.Points); i++ {
		if doc.Points[i].Value <= doc.Points[i-1].Value {
			t.Errorf("points not in axis order: %+v", doc.Points)
		}
	}
	out := progress.String()
	for _, want := range []string{"rdmabench cliffs: write bw 64B along qps 1..256 (×2): 9 ladder points", "at most 15 points",
		"3 runs a point of 1s each", "cliffs [", "point 12 (at most 15): qps ", "(bisection)", "cliffs: done in"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
	var rep strings.Builder
	if err := WriteReport(&rep, doc); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s\nprogress:\n%s", rep.String(), out)
	if !strings.Contains(rep.String(), "knee: mpps -") || !strings.Contains(rep.String(), "ladder step 32..64") ||
		!strings.Contains(rep.String(), "counter client hw_counters/completer_retry_err: 0 -> 0.02 per operation (retransmissions)") {
		t.Errorf("report:\n%s", rep.String())
	}
	b := writeDoc(t, doc)
	if err := schema.ValidateCliffsDocument(b); err != nil {
		t.Error(err)
	}
}

func writeDoc(t *testing.T, doc *result.CliffsDocument) []byte {
	t.Helper()
	p := t.TempDir() + "/c.json"
	if err := result.WriteCliffsJSON(p, doc); err != nil {
		t.Fatal(err)
	}
	b, err := readFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSearchFlat: a gently falling curve has no knee, measures only the
// ladder, and says so.
func TestSearchFlat(t *testing.T) {
	var calls []int
	doc, err := Search(context.Background(), Config{Axis: AxisQPs, Ladder: []int{1, 2, 4, 8, 16}, SpecAt: qpSpec, MaxBisections: 3,
		Run: fakeRun(t, func(v int) float64 { return 1 - 0.01*float64(v) }, nil, &calls)})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Knees) != 0 || doc.NoKneeUpTo == nil || *doc.NoKneeUpTo != 16 || len(calls) != 5 {
		t.Errorf("knees %+v, no knee up to %v, calls %v", doc.Knees, doc.NoKneeUpTo, calls)
	}
	var rep strings.Builder
	WriteReport(&rep, doc)
	if !strings.Contains(rep.String(), "no knee up to 16 QPs") {
		t.Errorf("report:\n%s", rep.String())
	}
}

// TestSearchRefusesBeforeRunning: a ladder point over a limit (here the
// spec's) or over the device check refuses the search, naming the point
// and the limit, before any point runs.
func TestSearchRefusesBeforeRunning(t *testing.T) {
	for name, c := range map[string]struct {
		ladder []int
		check  func([]spec.Spec) error
		want   string
	}{
		"spec limit":   {[]int{64, 128, 256, 512}, nil, "qps 512: QPs 512 out of range 1..256 (--qps)"},
		"device limit": {[]int{1, 2, 4}, func(s []spec.Spec) error { return errors.New("4 QPs: above rxe0's max_qp 3") }, "above rxe0's max_qp 3"},
		"runs":         {[]int{1}, nil, "--points: 1 values; want 2..64"},
	} {
		var calls []int
		_, err := Search(context.Background(), Config{Axis: AxisQPs, Ladder: c.ladder, SpecAt: qpSpec, Check: c.check,
			Run: fakeRun(t, func(int) float64 { return 1 }, nil, &calls)})
		if err == nil || !strings.Contains(err.Error(), c.want) || len(calls) != 0 {
			t.Errorf("%s: %v (ran %v); want %q before any run", name, err, calls, c.want)
		}
	}
}

// TestSearchPartial: a point that fails ends the search with the document
// so far, partial, its knees from the points measured.
func TestSearchPartial(t *testing.T) {
	var calls []int
	run := fakeRun(t, func(v int) float64 { return 1 / float64(1+v/8*3) }, nil, &calls)
	doc, err := Search(context.Background(), Config{Axis: AxisQPs, Ladder: []int{2, 4, 8, 16, 32}, SpecAt: qpSpec,
		Run: func(ctx context.Context, s spec.Spec) (result.Result, []string, error) {
			if s.QPs == 32 {
				return result.Result{}, []string{"w"}, errors.New("peer lost")
			}
			return run(ctx, s)
		}})
	if err == nil || doc == nil || !doc.Partial || len(doc.Points) != 4 || len(doc.Knees) != 2 || doc.Knees[0].Before != 4 {
		t.Fatalf("err %v doc %+v", err, doc)
	}
	if !strings.Contains(err.Error(), "qps 32: peer lost") {
		t.Error(err)
	}
}

func TestLadder(t *testing.T) {
	for _, c := range []struct {
		from, to int
		f        float64
		want     string
	}{
		{1, 256, 2, "[1 2 4 8 16 32 64 128 256]"},
		{1, 10, 2, "[1 2 4 8 10]"},
		{64, 100, 1.1, "[64 70 77 85 94 100]"},
		{1, 4, 1.2, "[1 2 3 4]"},
	} {
		got, err := Ladder(c.from, c.to, c.f)
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("Ladder(%d, %d, %g) = %v, %v; want %s", c.from, c.to, c.f, got, err, c.want)
		}
	}
	for _, c := range []struct {
		from, to int
		f        float64
		want     string
	}{{0, 4, 2, "--from 0"}, {4, 4, 2, "--to 4: must be above --from 4"}, {1, 4, 1, "--factor 1 out of range"}, {1, 1 << 30, 1.01, "more than 64 points"}} {
		if _, err := Ladder(c.from, c.to, c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Ladder(%d, %d, %g): %v; want %q", c.from, c.to, c.f, err, c.want)
		}
	}
	if m, ok := midpoint(4096, 8192); !ok || m != 5793 {
		t.Errorf("midpoint %d %v", m, ok)
	}
	if _, ok := midpoint(40, 41); ok {
		t.Error("midpoint of neighbours")
	}
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

// TestSearchCorner: past a corner (the rate flat to 64, then falling as
// 1/x, as under a byte limit along the size) both halves of the step
// fall; the bisection keeps the lower one, so the knee starts at the
// corner.
func TestSearchCorner(t *testing.T) {
	var calls []int
	corner := func(v int) float64 { return math.Min(1, 64/float64(v)) }
	doc, err := Search(context.Background(), Config{Axis: AxisQPs, Ladder: []int{8, 16, 32, 64, 128}, SpecAt: qpSpec,
		MaxBisections: 3, Run: fakeRun(t, corner, nil, &calls)})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Knees) != 1 || doc.Knees[0].Before != 64 || doc.Knees[0].After >= 128 {
		t.Errorf("knees %+v; want one from the corner at 64", doc.Knees)
	}
}

// TestSearchRetriesOnce: a point that fails once runs again, with a
// warning; the search goes on.
func TestSearchRetriesOnce(t *testing.T) {
	var calls []int
	run := fakeRun(t, func(int) float64 { return 1 }, nil, &calls)
	failed := false
	doc, err := Search(context.Background(), Config{Axis: AxisQPs, Ladder: []int{1, 2, 4}, SpecAt: qpSpec,
		Run: func(ctx context.Context, s spec.Spec) (result.Result, []string, error) {
			if s.QPs == 2 && !failed {
				failed = true
				return result.Result{}, nil, errors.New("server lost: no heartbeat")
			}
			return run(ctx, s)
		}})
	if err != nil || len(doc.Points) != 3 || doc.Partial || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "qps 2 failed once, run again: server lost") {
		t.Errorf("err %v, doc %+v", err, doc)
	}
}

// TestEstimateCountsWorkload: a point's time estimate counts its idle QPs
// as set-up QPs and its region's registration (a search along idle QPs
// took 77 s in the guest against 30 s announced before it did, one along
// MRs 36 s against 35 s), and its MRs' registration on both sides.
func TestEstimateCountsWorkload(t *testing.T) {
	c := Config{RunOverhead: time.Second, QPOverhead: 60 * time.Millisecond, PointOverhead: time.Second}
	base := spec.Spec{Op: "write", Mode: "bw", Size: 64, Duration: time.Second}
	idle, region := base, base
	idle.IdleQPs = 256
	region.Region = 1 << 30
	if got, want := c.estimate(idle, 2)-c.estimate(base, 2), 2*256*60*time.Millisecond; got != want {
		t.Errorf("256 idle QPs add %v to 2 runs, want %v", got, want)
	}
	if got, want := c.estimate(region, 1)-c.estimate(base, 1), 1024*RegionMiBOverhead+2*MROverhead; got != want {
		t.Errorf("a 1 GiB region adds %v to a run, want %v", got, want)
	}
	mrs := base
	mrs.MRs = 1024
	if got, want := c.estimate(mrs, 2)-c.estimate(base, 2), 2*2*1024*MROverhead; got != want {
		t.Errorf("1024 MRs add %v to 2 runs, want %v (each side registers them)", got, want)
	}
}
