package result_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// TestOpen: a file is read once and its kind named; each decoder takes
// its own kind, refuses another with the message its command has always
// given, and every error is an *InputError.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mesh := "testdata/mesh_tcp.json"
	cliffs := "resulttest/testdata/cliffs.json"
	full := "testdata/full.json"
	missing := filepath.Join(dir, "missing.json")
	big := write("big.json", `{"results": [`+strings.Repeat(" ", 200)+`]}`)
	for _, c := range []struct {
		name, path, kind string
		decode           func(*result.Input) error
		want             string // "" for none; else in the error
	}{
		{"result", full, result.KindResult, decodeResult, ""},
		{"mesh", mesh, result.KindMesh, decodeMesh, ""},
		{"cliffs", cliffs, result.KindCliffs, decodeCliffs, ""},
		// what the file is, and what was expected, in the words of the user
		{"mesh as result", mesh, result.KindMesh, decodeResult,
			"testdata/mesh_tcp.json: a mesh document (rdmabench mesh --json), where a result document (rdmabench run or loopback --json) was expected"},
		{"result as mesh", full, result.KindResult, decodeMesh,
			"testdata/full.json: a result document (rdmabench run or loopback --json), where a mesh document (rdmabench mesh --json) was expected"},
		{"mesh as cliffs", mesh, result.KindMesh, decodeCliffs,
			"testdata/mesh_tcp.json: a mesh document (rdmabench mesh --json), where a cliffs document (rdmabench cliffs --json) was expected"},
		{"missing as result", missing, "", decodeResult, "cannot read " + missing + ": no such file or directory"},
		{"missing as mesh", missing, "", decodeMesh, "cannot read " + missing + ": no such file or directory"},
		{"missing as cliffs", missing, "", decodeCliffs, "cannot read " + missing + ": no such file or directory"},
		{"over the limit", big, "", decodeResult, "larger than the input limit (100 bytes; RDMABENCH_MAX_INPUT_BYTES raises it)"},
		{"not JSON", write("garbage.json", "{"), result.KindResult, decodeResult,
			"garbage.json: not JSON (unexpected end of JSON input), where a result document (rdmabench run or loopback --json) was expected"},
		{"no schema_version", write("other.json", `{"tool": "perftest"}`), result.KindResult, decodeMesh,
			"other.json: not an rdmabench document (no schema_version), where a mesh document (rdmabench mesh --json) was expected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(n int64) { result.MaxInputBytes = n }(result.MaxInputBytes)
			if c.path == big {
				result.MaxInputBytes = 100
			}
			in := result.Open(c.path)
			if in.Kind != c.kind {
				t.Errorf("kind %q, want %q", in.Kind, c.kind)
			}
			err := c.decode(in)
			var ie *result.InputError
			switch {
			case c.want == "" && err != nil:
				t.Errorf("decode: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("decode: %v, want %q", err, c.want)
			case err != nil && !errors.As(err, &ie):
				t.Errorf("decode: %v is not an *InputError", err)
			}
			if c.path == missing && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("decode: %v does not wrap fs.ErrNotExist", err)
			}
			if c.path == big && !errors.Is(err, result.ErrTooLarge) {
				t.Errorf("decode: %v does not wrap ErrTooLarge", err)
			}
			if err := c.decode(in); err == nil || !errors.As(err, &ie) {
				t.Errorf("a second decode: %v, want an *InputError", err)
			}
		})
	}
}

func decodeResult(in *result.Input) error { _, err := in.Result(); return err }
func decodeMesh(in *result.Input) error   { _, err := in.Mesh(); return err }
func decodeCliffs(in *result.Input) error { _, err := in.Cliffs(); return err }

// FuzzOpen: whatever the bytes, an Input's kind is KindOf's, and a
// decoder (which: the result, mesh or cliffs one) either returns a
// document or an *InputError; it takes exactly what the one validation
// step (CheckAny) passes of its kind. A second decode is an *InputError.
func FuzzOpen(f *testing.F) {
	decoders := []struct {
		kind   string
		decode func(*result.Input) error
	}{{result.KindResult, decodeResult}, {result.KindMesh, decodeMesh}, {result.KindCliffs, decodeCliffs}}
	seeds := [][]byte{[]byte(`{"kind": 3}`), []byte(`[1]`), []byte(`null`), []byte(`{}`), []byte(`{"mr": {}}`),
		[]byte(`{"kind": "cliffs", "schema_version": "1"}`), []byte(`{"kind": "mesh", "mr": 1}`)}
	for _, b := range resulttest.RealFiles(f) {
		seeds = append(seeds, b)
	}
	for _, h := range resulttest.HostileDocuments(f) {
		seeds = append(seeds, h.Data)
	}
	for i, b := range seeds { // each decoder on each kind, across the seeds
		f.Add(b, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		resulttest.Bounded(t, func() {
			d := decoders[int(which)%len(decoders)]
			in := result.NewInput("fuzz.json", data)
			kind, checkErr := result.CheckAny(data)
			if in.Kind != result.KindOf(data) || in.Kind != kind {
				t.Fatalf("Input kind %q, KindOf %q, CheckAny %q", in.Kind, result.KindOf(data), kind)
			}
			err := d.decode(in)
			var ie *result.InputError
			if err != nil && !errors.As(err, &ie) {
				t.Fatalf("%s decoder: %v is not an *InputError", d.kind, err)
			}
			if want := kind == d.kind && checkErr == nil; (err == nil) != want {
				t.Fatalf("%s decoder on a %s document (CheckAny: %v): %v", d.kind, kind, checkErr, err)
			}
			if err := d.decode(in); !errors.As(err, &ie) {
				t.Fatalf("a second decode: %v, want an *InputError", err)
			}
		})
	})
}
