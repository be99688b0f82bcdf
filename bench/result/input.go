package result

// Documents as commands read them: each file read once within
// MaxInputBytes, its kind named by its header, then decoded and checked
// whole as the kind the command reads.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// InputError is a document a reader was given that cannot be read, is
// larger than MaxInputBytes, is not the kind it reads, or breaks an
// invariant (a *ValueError inside): what rdmabench exits 8 with. Its
// message is Err's.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// writers names the command that writes each kind of document, for the
// errors that say what a file is and what was expected.
var writers = map[string]string{
	KindResult:    "rdmabench run or loopback --json",
	KindMR:        "rdmabench mr --json",
	KindMesh:      "rdmabench mesh --json",
	KindCliffs:    "rdmabench cliffs --json",
	KindIsolation: "rdmabench isolation --json",
	KindDoctor:    "rdmabench doctor --json",
}

// Describe names a kind of document for a user: "a mesh document
// (rdmabench mesh --json)"; "a document of kind "x"" for one rdmabench
// does not write.
func Describe(kind string) string {
	w, ok := writers[kind]
	if !ok {
		return fmt.Sprintf("a document of kind %q", kind)
	}
	return "a" + article(kind) + " " + kind + " document (" + w + ")"
}

// whatIs says what data is, for a file that is not the kind expected:
// not JSON, not an rdmabench document (no schema_version), or its kind.
func whatIs(data []byte) string {
	var h struct {
		SchemaVersion *int `json:"schema_version"`
		Kind          string
	}
	switch {
	case !json.Valid(data):
		return "not JSON"
	case json.Unmarshal(data, &h) != nil || h.SchemaVersion == nil && h.Kind == "":
		return "not an rdmabench document (no schema_version)"
	}
	return Describe(KindOf(data))
}

// notKind is the error for the file name holding data, read as a document
// of kind: what it is (with why, if not ""), and what was expected, such as
// "a.json: a result document (rdmabench run or loopback --json), where a
// mesh document (rdmabench mesh --json) was expected".
func notKind(name string, data []byte, kind string, why error) error {
	is := whatIs(data)
	if why != nil {
		is += " (" + why.Error() + ")"
	}
	if name == "-" {
		name = "stdin"
	}
	return fmt.Errorf("%s: %s, where %s was expected", name, is, Describe(kind))
}

// readErr is the error for a file the command could not read: the path
// and why, without Go's "open" ("cannot read a.json: no such file or
// directory"); a file over the input limit says so itself.
func readErr(path string, err error) error {
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	if path == "-" {
		path = "stdin"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}

// inputErr wraps a non-nil err as an *InputError.
func inputErr(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{err}
}

// Input is one document file given to a command (compare, plot, report):
// its bytes, read whole once (ReadInput: at most MaxInputBytes; "-" is
// stdin), and the kind its header names (KindOf). A file that cannot be
// read has no kind; the method that decodes it says why, naming what it
// was reading. Each method decodes and checks the document whole as one
// kind, and every error it returns is an *InputError. An Input decodes
// once: the bytes are let go then.
type Input struct {
	Path string // as given; "-" for stdin
	Kind string // KindOf's name; "" when the file could not be read
	data []byte
	err  error // reading it
	used bool
}

// Open reads the document at path ("-": stdin) and names its kind.
func Open(path string) *Input {
	in := &Input{Path: path}
	if in.data, in.err = ReadInput(path); in.err == nil {
		in.Kind = KindOf(in.data)
	}
	return in
}

// OpenAll opens each of paths (Open), in order.
func OpenAll(paths []string) []*Input {
	ins := make([]*Input, len(paths))
	for i, p := range paths {
		ins[i] = Open(p)
	}
	return ins
}

// take returns the bytes once; a second decode is an error.
func (in *Input) take() ([]byte, error) {
	if in.used {
		return nil, errors.New("decoded already")
	}
	in.used = true
	b := in.data
	in.data = nil
	return b, in.err
}

// Result decodes a result document (ParseDocument): another kind is
// refused as what it is, after its own check.
func (in *Input) Result() (*Document, error) {
	b, err := in.take()
	if err != nil {
		return nil, inputErr(readErr(in.Path, err))
	}
	doc, err := ParseDocument(b, in.Path)
	return doc, inputErr(err)
}

// Mesh decodes a mesh document (ParseMesh).
func (in *Input) Mesh() (*MeshDocument, error) {
	b, err := in.take()
	if err != nil {
		return nil, inputErr(readErr(in.Path, err))
	}
	doc, err := ParseMesh(b, in.Path)
	return doc, inputErr(err)
}

// Cliffs decodes a cliffs document (ReadCliffs); a document of another
// kind is refused by its kind alone.
func (in *Input) Cliffs() (*CliffsDocument, error) {
	b, err := in.take()
	if err != nil {
		return nil, inputErr(readErr(in.Path, err))
	}
	if KindOf(b) != KindCliffs {
		return nil, inputErr(notKind(in.Path, b, KindCliffs, nil))
	}
	doc, err := ReadCliffs(b)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", in.Path, err))
	}
	return doc, nil
}

// Results decodes every input as a result document (Result), stopping at
// the first that fails.
func Results(ins []*Input) ([]*Document, error) {
	docs := make([]*Document, len(ins))
	for i, in := range ins {
		var err error
		if docs[i], err = in.Result(); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// Meshes decodes every input as a mesh document (Mesh), stopping at the
// first that fails.
func Meshes(ins []*Input) ([]*MeshDocument, error) {
	docs := make([]*MeshDocument, len(ins))
	for i, in := range ins {
		var err error
		if docs[i], err = in.Mesh(); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// ReadResults opens and decodes each of paths as a result document, in
// order, stopping at the first that fails: the reader of commands that
// take result documents only (report, compare --noise).
func ReadResults(paths []string) ([]*Document, error) {
	docs := make([]*Document, len(paths))
	for i, p := range paths {
		var err error
		if docs[i], err = Open(p).Result(); err != nil {
			return nil, err
		}
	}
	return docs, nil
}
