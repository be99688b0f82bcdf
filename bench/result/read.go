package result

// Reading documents: the input limit, the result document's decoding and
// check, and which environment fields it knows. The kind of a document is
// header.go's, a command's reading of its files input.go's.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// MaxInputBytes is the largest document a reader takes (ReadJSONFile,
// ReadMeshFile, ReadInput): a larger file is refused before it is decoded,
// so that no input exhausts the machine. The CLI's
// $RDMABENCH_MAX_INPUT_BYTES overrides it (docs/output.md).
var MaxInputBytes int64 = 32 << 20

// ErrTooLarge is what reading a file larger than MaxInputBytes wraps.
var ErrTooLarge = errors.New("larger than the input limit")

// ReadInput reads the file at path, or stdin for "-": an error wrapping
// ErrTooLarge for one of more than MaxInputBytes.
func ReadInput(path string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	limit := MaxInputBytes
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes; RDMABENCH_MAX_INPUT_BYTES raises it)", path, ErrTooLarge, limit)
	}
	return b, nil
}

// ReadJSONFile reads a document written by WriteJSONFile; path "-" reads
// stdin. A file over MaxInputBytes, a document of another kind or schema
// version, and one whose values fail Document.Check (a *ValueError naming
// the field) are errors, each an *InputError.
func ReadJSONFile(path string) (*Document, error) {
	return Open(path).Result()
}

// ParseDocument decodes and checks (Document.Check) the result document
// b; name is the file in errors.
func ParseDocument(b []byte, name string) (*Document, error) {
	if k := KindOf(b); k != KindResult {
		if _, err := CheckAny(b); err != nil { // named as what it is, and why it fails as that
			return nil, fmt.Errorf("%w; as a%s %s document it fails its own check: %w", notKind(name, b, KindResult, nil), article(k), k, err)
		}
		return nil, notKind(name, b, KindResult, nil)
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		if !json.Valid(b) {
			return nil, notKind(name, b, KindResult, err)
		}
		return nil, fmt.Errorf("%s: not %s: %w", name, Describe(KindResult), err)
	}
	if doc.SchemaVersion != SchemaVersion {
		if doc.SchemaVersion == 0 {
			return nil, notKind(name, b, KindResult, nil)
		}
		return nil, fmt.Errorf("%s: schema_version: schema version %d, this rdmabench reads %d",
			name, doc.SchemaVersion, SchemaVersion)
	}
	if err := doc.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	doc.envKeys = envKeysOf(b)
	return &doc, nil
}

// EnvKnown reports whether the environment field of JSON name key is
// known: present in the document read, or set by SetEnvKnown; a document
// made in code knows all of them. An imported perftest document knows only
// what perftest printed.
func (doc *Document) EnvKnown(key string) bool {
	return doc.envKeys == nil || doc.envKeys[key]
}

// SetEnvKnown limits the environment fields the document knows to keys
// (JSON names): WriteJSONFile leaves the others out, EnvKnown says false
// for them.
func (doc *Document) SetEnvKnown(keys ...string) {
	doc.envKeys = map[string]bool{}
	for _, k := range keys {
		doc.envKeys[k] = true
	}
}

// envKeysOf returns the members of data's "environment" object (nil when
// it has none).
func envKeysOf(data []byte) map[string]bool {
	var probe struct {
		Env map[string]json.RawMessage `json:"environment"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Env == nil {
		return nil
	}
	all := true
	for _, k := range envRequired() {
		if _, ok := probe.Env[k]; !ok {
			all = false
		}
	}
	if all { // every field rdmabench always writes: nothing unknown
		return nil
	}
	keys := make(map[string]bool, len(probe.Env))
	for k := range probe.Env {
		keys[k] = true
	}
	return keys
}

// envRequired are the JSON names of Env's fields without omitempty.
func envRequired() []string {
	var out []string
	t := reflect.TypeFor[Env]()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && !strings.Contains(opts, "omitempty") {
			out = append(out, name)
		}
	}
	return out
}
