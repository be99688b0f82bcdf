package schema_test

import (
	"os"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestKindOf: each kind's document is told apart and validates against its
// own schema.
func TestKindOf(t *testing.T) {
	for _, tc := range []struct{ file, kind string }{
		{"../testdata/full.json", "result"},
		{"../testdata/tcp.json", "result"},
		{"../testdata/full_mr.json", "mr"},
		{"../testdata/doctor.json", "doctor"},
		{"../testdata/mesh_partial.json", "mesh"},
		{"../resulttest/testdata/cliffs.json", "cliffs"},
		{"../resulttest/testdata/isolation.json", "isolation"},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if k := schema.KindOf(b); k != tc.kind {
			t.Errorf("%s: KindOf = %q, want %q", tc.file, k, tc.kind)
		}
		if err := schema.Validate(b); err != nil {
			t.Errorf("%s (%s): %v", tc.file, tc.kind, err)
		}
	}
}
