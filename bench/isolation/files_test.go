//go:build experiment

// Run by make isolation-test (go test -tags experiment): it checks what the guest run wrote.

package isolation

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestIsolationFiles checks the isolation documents a guest run wrote
// ($RDMABENCH_ISOLATION_DIR/*.json, make isolation-test): each validates
// against isolation.schema.json, has every round's runs, and gives every
// attacker every figure's ratio, with its interval wherever the runs
// back one.
func TestIsolationFiles(t *testing.T) {
	dir := os.Getenv("RDMABENCH_ISOLATION_DIR")
	if dir == "" {
		t.Fatal("RDMABENCH_ISOLATION_DIR is not set: the directory make isolation-test wrote")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no documents in %s (%v)", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.ValidateIsolationDocument(b); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		d, err := result.ReadIsolation(b)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s beside %d attackers, %d rounds, %v (announced %v)", filepath.Base(f), d.Victim, len(d.Attackers), d.Repeat,
			time.Duration(d.ElapsedNS).Round(time.Second), time.Duration(d.EstimatedNS).Round(time.Second))
		if len(d.Alone) != d.Repeat || d.Partial {
			t.Errorf("%s: %d runs alone for %d rounds (partial %v)", f, len(d.Alone), d.Repeat, d.Partial)
		}
		for _, a := range d.Attackers {
			if len(a.Runs) != d.Repeat || len(a.Achieved) != d.Repeat || len(a.Ratios) != len(result.IsolationFigures) {
				t.Errorf("%s: %s: %d runs, %d rates, %d ratios", f, a.Name, len(a.Runs), len(a.Achieved), len(a.Ratios))
			}
			for _, r := range a.Ratios { // an interval wherever the runs back one
				na, nb := r.AttackedRuns, r.AloneRuns
				want := na >= 1 && nb >= 1 && (na+nb >= 3 || r.Figure != result.FigureBandwidth)
				if want != (r.Low != nil && r.High != nil) || (r.Ratio == nil) != (na == 0 || nb == 0) {
					t.Errorf("%s: %s %s: %d attacked and %d alone runs, ratio %v, interval %v-%v", f, a.Name, r.Figure, na, nb, r.Ratio, r.Low, r.High)
				}
			}
		}
	}
}
