package result_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// meshFixture is a mesh document rdmabench wrote (3 ranks under mpiexec).
const meshFixture = "testdata/mesh_tcp.json"

func TestMeshMutations(t *testing.T) {
	doc := readFile(t, meshFixture)
	if !result.IsMeshDocument(doc) || result.IsMeshDocument(readFile(t, "testdata/full.json")) {
		t.Fatal("IsMeshDocument does not tell the documents apart")
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, reason string
		doc                []byte
	}{
		{"no pairs", "", "missing property 'pairs'", del(t, doc, "/pairs")},
		{"one rank", "/ranks", "minItems", set(t, doc, "/ranks", []any{map[string]any{}})},
		{"bad pattern", "/pattern", "value must be one of", set(t, doc, "/pattern", "star")},
		{"bad outcome", "/outcome", "value must be one of", set(t, doc, "/outcome", "done")},
		{"bad pair status", "/pairs/0/status", "value must be one of", set(t, doc, "/pairs/0/status", "lost")},
		{"no results", "/pairs/0", "missing property 'results'", del(t, doc, "/pairs/0/results")},
		{"bad result", "/pairs/0/results/0", "missing property 'op'", del(t, doc, "/pairs/0/results/0/op")},
		{"bad rank status", "/ranks/1/status", "value must be one of", set(t, doc, "/ranks/1/status", "dead")},
		{"unknown member", "", "additional properties", set(t, doc, "/matrix", 1)},
		{"bad env", "/ranks/0/environment", "missing property", del(t, doc, "/ranks/0/environment/host")},
		{"unsynced below -1", "/unsynced_from_round", "minimum", set(t, doc, "/unsynced_from_round", -2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := schema.ValidateMeshDocument(c.doc)
			var se *schema.Error
			if !errors.As(err, &se) {
				t.Fatalf("err %v, want a *schema.Error", err)
			}
			for _, v := range se.Violations {
				if v.Path == c.path && strings.Contains(v.Reason, c.reason) {
					return
				}
			}
			t.Errorf("no violation at %q with %q in:\n%v", c.path, c.reason, err)
		})
	}
	for _, c := range []struct {
		name string
		doc  []byte
	}{
		{"partial", set(t, set(t, doc, "/outcome", "partial"), "/pairs/0/status", "failed")},
		{"lost rank", del(t, set(t, doc, "/ranks/2/status", "lost"), "/ranks/2/environment")},
		{"more warnings", set(t, doc, "/warnings", []any{"a", "b"})},
	} {
		if err := schema.ValidateMeshDocument(c.doc); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestMeshRoundTrip(t *testing.T) {
	d, err := result.ReadMeshFile(meshFixture)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.json")
	if err := result.WriteMeshJSON(out, d); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(readFile(t, out)); err != nil {
		t.Fatal(err)
	}
	if d.Failed() != 0 || len(d.Pairs) != 3 || d.Pairs[0].Name() == "" {
		t.Errorf("failed %d, %d pairs", d.Failed(), len(d.Pairs))
	}
	doc := d.AsDocument(d.Pairs[0])
	if len(doc.Results) != len(d.Pairs[0].Results) || doc.Env.Host == "" {
		t.Errorf("AsDocument: %d results, env host %q", len(doc.Results), doc.Env.Host)
	}
	if _, err := result.ReadJSONFile(meshFixture); err == nil {
		// a mesh document is not a result document: ReadJSONFile must not take it silently
		t.Log("note: ReadJSONFile accepted a mesh document")
	}
	if _, err := result.ParseMesh(readFile(t, "testdata/full.json"), "full.json"); err == nil {
		t.Error("ParseMesh took a result document")
	}
}
