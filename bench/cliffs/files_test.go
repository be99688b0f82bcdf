//go:build experiment

// Run by make cliffs-test (go test -tags experiment): it checks what the guest run wrote.

package cliffs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestCliffsFiles checks the cliffs documents a guest run wrote
// ($RDMABENCH_CLIFFS_DIR/*.json, make cliffs-test): each validates against
// cliffs.schema.json, ended within the time its plan announced, and has a
// point at every ladder value; a search along QPs reaches 256.
func TestCliffsFiles(t *testing.T) {
	dir := os.Getenv("RDMABENCH_CLIFFS_DIR")
	if dir == "" {
		t.Fatal("RDMABENCH_CLIFFS_DIR is not set: the directory make cliffs-test wrote")
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
		if err := schema.ValidateCliffsDocument(b); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		d, err := result.ReadCliffs(b)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s along %s, %d points, %d knees, %v (announced at most %v)", filepath.Base(f), d.Test, d.Axis, len(d.Points),
			len(d.Knees), time.Duration(d.ElapsedNS).Round(time.Second), time.Duration(d.EstimatedNS).Round(time.Second))
		if d.EstimatedNS == 0 || d.ElapsedNS > d.EstimatedNS {
			t.Errorf("%s: took %v; the plan announced at most %v", f, time.Duration(d.ElapsedNS), time.Duration(d.EstimatedNS))
		}
		have := map[int]bool{}
		for _, p := range d.Points {
			have[p.Value] = true
		}
		for _, v := range d.Ladder {
			if !have[v] {
				t.Errorf("%s: no point at the ladder's %d", f, v)
			}
		}
		if d.Axis == AxisQPs && d.Ladder[len(d.Ladder)-1] < 256 {
			t.Errorf("%s: QPs up to %d; want at least 256", f, d.Ladder[len(d.Ladder)-1])
		}
	}
}
