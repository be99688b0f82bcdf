//go:build experiment

// A tool for a guest run's documents (go test -tags experiment -run TestSchemaFiles
// ./bench/result with RDMABENCH_JSON_DIR set), not part of make test.

package result_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestSchemaFiles validates every *.json file under $RDMABENCH_JSON_DIR,
// the documents a guest run wrote: MR documents (a top-level "mr" member)
// against mr.schema.json, doctor documents against doctor.schema.json, the others against schema.json plus what the
// current rdmabench always writes.
func TestSchemaFiles(t *testing.T) {
	dir := os.Getenv(JSONDirEnv)
	if dir == "" {
		t.Fatal(JSONDirEnv + " is not set: a directory of documents to check")
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s=%s holds no *.json file", JSONDirEnv, dir)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			b := readFile(t, path)
			kind := schema.KindOf(b)
			if kind != "result" {
				if err := schema.Validate(b); err != nil {
					t.Errorf("%s (%s document): %v", path, kind, err)
				}
				return
			}
			if err := validateCurrent(t, b); err != nil {
				t.Errorf("%s (result document): %v", path, err)
			}
		})
	}
	t.Logf("validated %d documents", len(files))
}
