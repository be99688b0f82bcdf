package result_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// TestHostileDocuments: every document of the hostile corpus is refused by
// the one validation step (CheckAny), naming the JSON path; every real
// document is accepted, each as its own kind.
func TestHostileDocuments(t *testing.T) {
	hs := resulttest.HostileDocuments(t)
	if len(hs) < 30 {
		t.Fatalf("%d hostile documents, want at least 30", len(hs))
	}
	kinds := map[string]int{}
	for _, h := range hs {
		kinds[h.Kind]++
		kind, err := result.CheckAny(h.Data)
		if kind != h.Kind {
			t.Errorf("%s: kind %q, want %q", h.Name, kind, h.Kind)
		}
		var ve *result.ValueError
		switch {
		case err == nil:
			t.Errorf("%s: accepted", h.Name)
		case !strings.Contains(err.Error(), h.Path+":"):
			t.Errorf("%s: %v, want the path %s named", h.Name, err, h.Path)
		case h.Path != "schema_version" && (!errors.As(err, &ve) || ve.Path != h.Path):
			t.Errorf("%s: %v is not a ValueError at %s", h.Name, err, h.Path)
		}
	}
	for _, k := range result.Kinds {
		if kinds[k] < 2 {
			t.Errorf("%d hostile %s documents, want at least 2", kinds[k], k)
		}
	}
}

func TestRealDocumentsAccepted(t *testing.T) {
	seen := map[string]bool{}
	for name, b := range resulttest.RealFiles(t) {
		kind, err := result.CheckAny(b)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		seen[kind] = true
	}
	for _, k := range result.Kinds {
		if !seen[k] {
			t.Errorf("no real %s document in testdata", k)
		}
	}
}

func BenchmarkCheckAny(b *testing.B) {
	data := resulttest.RealFiles(b)["bench/plot/testdata/a.json"]
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := result.CheckAny(data); err != nil {
			b.Fatal(err)
		}
	}
}
