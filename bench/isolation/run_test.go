package isolation

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
	"github.com/rdmabench/rdmabench/bench/spec"
)

func victim() spec.Spec {
	return spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, TxDepth: 1, CQMod: 1, Duration: time.Second}
}

// TestCatalogueSpecs: every attacker beside a SEND latency victim is a
// valid test, and the catalogue follows Husky's classes.
func TestCatalogueSpecs(t *testing.T) {
	c := Config{Victim: victim(), Attackers: Catalogue, Repeat: 1}
	alone, attacked, err := c.Specs()
	if err != nil {
		t.Fatal(err)
	}
	if alone.Load != nil || len(attacked) != len(Catalogue) {
		t.Fatalf("alone %+v, %d attacked", alone.Load, len(attacked))
	}
	for i, s := range attacked {
		if s.Load == nil || s.Size != 2 || s.Op != result.OpSend {
			t.Errorf("%s: %+v", Catalogue[i].Name, s)
		}
	}
	for _, want := range []string{"bw-hog", "small-flood", "rnr-storm", "pcie-sizes", "qp-thrash", "mr-thrash", "mr-churn"} {
		if !known(want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	for _, bad := range []struct {
		v    spec.Spec
		want string
	}{
		{spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 2}, "latency test"},
		{spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Transport: result.TransportTCP}, "RDMA victim"},
		{spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Load: &spec.Load{QPs: 1, Op: "write", Size: 8}}, "drop --load-qps"},
		{spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 0x7fffffff}, "victim send lat"},
	} {
		c := Config{Victim: bad.v, Attackers: Catalogue, Repeat: 1}
		if _, _, err := c.Specs(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.v, err, bad.want)
		}
	}
	if _, _, err := (&Config{Victim: victim(), Attackers: Catalogue, Repeat: 0}).Specs(); err == nil || !strings.Contains(err.Error(), "--repeat 0") {
		t.Errorf("repeat 0: %v", err)
	}
}

func TestSelect(t *testing.T) {
	as, err := Select("mr-churn, bw-hog")
	if err != nil || len(as) != 2 || as[0].Name != "bw-hog" || as[1].Name != "mr-churn" {
		t.Errorf("%v %v", as, err)
	}
	if as, err := Select("all"); err != nil || len(as) != len(Catalogue) {
		t.Errorf("all: %d %v", len(as), err)
	}
	if _, err := Select("bw-hog,noisy"); err == nil || !strings.Contains(err.Error(), `"noisy" unknown; valid: bw-hog`) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := Select("bw-hog,bw-hog"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("twice: %v", err)
	}
}

// fakeResult is a latency result whose p50 is p50 ns (pure unit tests of
// the rounds and the document; the real path runs in the guest).
func fakeResult(s spec.Spec, p50 float64) result.Result {
	n := func(v float64) result.Nanos { return result.Nanos{NS: v, OK: true} }
	r := result.Result{Iterations: 10000, Bandwidth: result.NewBandwidth(s.Size, 10000, int64(time.Second)),
		Latency: result.Latency{Count: 10000, Min: p50 / 2, P50: n(p50), P90: n(p50 * 1.5), P99: n(p50 * 2), P99_9: n(p50 * 4), Max: p50 * 10,
			Percentiles: []result.Quantile{{P: 50, Value: n(p50), CILow: n(p50 * 0.98), CIHigh: n(p50 * 1.02)}}}}
	if s.Load != nil {
		r.Load = &result.LoadResult{QPs: s.Load.QPs, Op: s.Load.Op, SizeBytes: s.Load.Size, Ops: 1000,
			Bandwidth: result.NewBandwidth(s.Load.Size, 1000, int64(time.Second)), RegistrationsPerSec: 1234}
	}
	return r
}

// TestRunRounds: the rounds alternate alone and attacked, the document
// validates, the bounds decide the outcome.
func TestRunRounds(t *testing.T) {
	var order []string
	one := func(s spec.Spec) result.Result {
		if s.Load == nil {
			order = append(order, "alone")
			return fakeResult(s, 1000+float64(len(order)))
		}
		order = append(order, "attacked")
		return fakeResult(s, 3000+float64(len(order)))
	}
	fake := func(_ context.Context, specs []spec.Spec) ([]result.Result, []string, error) {
		var rs []result.Result
		for _, s := range specs {
			rs = append(rs, one(s))
		}
		return rs, []string{"software RDMA"}, nil
	}
	as, _ := Select("bw-hog,mr-churn")
	var progress bytes.Buffer
	checked := 0
	cfg := Config{Victim: victim(), Attackers: as, Repeat: 3, Run: fake, Progress: &progress, Role: "loopback", Device: "rxe0",
		Check:  func(s []spec.Spec) error { checked = len(s); return nil },
		Bounds: []result.InflationBound{{Figure: "p50", Max: 2}, {Figure: "p99", Max: 10}}}
	doc, err := Run(context.Background(), cfg)
	var ce *CrossedError
	if !errors.As(err, &ce) || len(ce.Verdicts) != 2 || !strings.Contains(err.Error(), "bw-hog p50 2.99x (2.98-3.00) (bound 2x)") {
		t.Fatalf("outcome %v, want p50 crossed for both attackers", err)
	}
	if checked != 3 {
		t.Errorf("check saw %d tests", checked)
	}
	want := strings.Repeat("alone attacked attacked ", 3)
	if got := strings.Join(order, " ") + " "; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if !strings.Contains(progress.String(), "isolation: send lat 2B alone and beside 2 attackers (bw-hog, mr-churn), 3 rounds: 9 runs, about") ||
		!strings.Contains(progress.String(), "isolation: round 3/3: alone, then beside bw-hog, mr-churn\n") {
		t.Errorf("plan line: %q", progress.String())
	}
	if len(doc.Alone) != 3 || len(doc.Attackers[1].Runs) != 3 || doc.Attackers[1].AchievedMedian.RegistrationsPerSec != 1234 {
		t.Errorf("document %+v", doc)
	}
	var out bytes.Buffer
	if err := WriteReport(&out, doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"beside bw-hog", "attacked/alone", "max-inflation p50=2x, bw-hog: CROSSED", "max-inflation p99=10x, mr-churn: PASS", "1234 reg+dereg/s"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
	p := filepath.Join(t.TempDir(), "iso.json")
	if err := result.WriteIsolationJSON(p, doc); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if err := schema.ValidateIsolationDocument(b); err != nil {
		t.Errorf("schema: %v", err)
	}
	if !slices.Equal(doc.Warnings, []string{"software RDMA"}) {
		t.Errorf("warnings %q, want each once", doc.Warnings)
	}
	// a round failing once runs once more, with a warning
	n := 0
	cfg.Run = func(ctx context.Context, specs []spec.Spec) ([]result.Result, []string, error) {
		if n++; n == 2 {
			return []result.Result{one(specs[0])}, nil, errors.New("boom")
		}
		return fake(ctx, specs)
	}
	doc, err = Run(context.Background(), cfg)
	if !errors.As(err, &ce) || doc.Partial || len(doc.Attackers[0].Runs) != 3 || !slices.Contains(doc.Warnings, "round 2: failed (boom); ran it once more") {
		t.Errorf("a round failing once: %v %+v", err, doc)
	}
	// failing twice: the rounds before, partial, and the error
	n = 0
	cfg.Run = func(ctx context.Context, specs []spec.Spec) ([]result.Result, []string, error) {
		if n++; n == 2 || n == 3 {
			return nil, nil, errors.New("boom")
		}
		return fake(ctx, specs)
	}
	doc, err = Run(context.Background(), cfg)
	if err == nil || err.Error() != "round 2: boom" || doc == nil || !doc.Partial || doc.Verdicts != nil || len(doc.Alone) != 1 || len(doc.Attackers[1].Runs) != 1 {
		t.Errorf("failing round: %v %+v", err, doc)
	}
	// too few results without an error
	cfg.Run = func(ctx context.Context, specs []spec.Spec) ([]result.Result, []string, error) {
		rs, w, err := fake(ctx, specs)
		return rs[:1], w, err
	}
	if _, err := Run(context.Background(), cfg); err == nil || err.Error() != "round 1: 1 results for 3 tests" {
		t.Errorf("short round: %v", err)
	}
	// a victim run without samples: a warning, and no ratio counts it
	cfg.Run = func(ctx context.Context, specs []spec.Spec) ([]result.Result, []string, error) {
		rs, w, err := fake(ctx, specs)
		rs[0] = result.Result{}
		return rs, w, err
	}
	cfg.Bounds = nil
	doc, err = Run(context.Background(), cfg)
	if err != nil || !slices.Contains(doc.Warnings, "round 2, alone: 0 samples, too few for a p50: the run counts in no ratio (a loaded host? lengthen -D)") {
		t.Errorf("thin run: %v %q", err, doc.Warnings)
	}
	if r := doc.Attackers[0].Ratios[0]; r.AloneRuns != 0 || r.Ratio != nil {
		t.Errorf("thin runs: %+v", r)
	}
	// a refused test: nothing runs
	cfg.Check = func([]spec.Spec) error { return errors.New("over budget") }
	if doc, err := Run(context.Background(), cfg); doc != nil || err == nil || err.Error() != "over budget" {
		t.Errorf("refused: %v %v", doc, err)
	}
}

// TestPlanCountsLoadMRs: the plan's time counts registering mr-thrash's
// MRs on both sides (MROverhead each), and its load record says the MRs.
func TestPlanCountsLoadMRs(t *testing.T) {
	est := func(names string) time.Duration {
		as, err := Select(names)
		if err != nil {
			t.Fatal(err)
		}
		c := Config{Victim: victim(), Attackers: as, Repeat: 1}
		_, d, err := c.Plan()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	thrash, hog := est("mr-thrash"), est("bw-hog") // both 2 load QPs
	if want := time.Duration(2*mrThrashMRs) * MROverhead; thrash-hog != want {
		t.Errorf("mr-thrash plans %v more than bw-hog, want %v", thrash-hog, want)
	}
	as, _ := Select("mr-thrash")
	if r := loadOf(as[0].Load); r.MRs != 4096 || r.QPs != 2 || r.SizeBytes != 512 {
		t.Errorf("load record %+v", r)
	}
}
