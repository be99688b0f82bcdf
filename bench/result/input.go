package result

// Documents as commands read them: each file read once within
// MaxInputBytes, its kind named by its header, then decoded and checked
// whole as the kind the command reads.

import (
	"errors"
	"fmt"
)

// InputError is a document a reader was given that cannot be read, is
// larger than MaxInputBytes, is not the kind it reads, or breaks an
// invariant (a *ValueError inside): what rdmabench exits 8 with. Its
// message is Err's.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

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
		return nil, inputErr(fmt.Errorf("bench: read results: %w", err))
	}
	doc, err := ParseDocument(b, in.Path)
	return doc, inputErr(err)
}

// Mesh decodes a mesh document (ParseMesh).
func (in *Input) Mesh() (*MeshDocument, error) {
	b, err := in.take()
	if err != nil {
		return nil, inputErr(fmt.Errorf("bench: read mesh: %w", err))
	}
	doc, err := ParseMesh(b, in.Path)
	return doc, inputErr(err)
}

// Cliffs decodes a cliffs document (ReadCliffs); a document of another
// kind is refused by its kind alone.
func (in *Input) Cliffs() (*CliffsDocument, error) {
	b, err := in.take()
	if err != nil {
		return nil, inputErr(err)
	}
	if KindOf(b) != KindCliffs {
		return nil, inputErr(fmt.Errorf("%s: not a cliffs document ('rdmabench cliffs --json')", in.Path))
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
