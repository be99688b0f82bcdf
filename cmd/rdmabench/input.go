package main

import "github.com/rdmabench/rdmabench/bench/result"

// inputError is an input file of compare, plot or report that cannot be
// read or is not an rdmabench document (exit exitInput).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// readDocument reads the result document at path (- for stdin); a failure
// is an inputError.
func readDocument(path string) (*result.Document, error) {
	doc, err := result.ReadJSONFile(path)
	if err != nil {
		return nil, inputError{err}
	}
	return doc, nil
}

// readMeshDocument reads the mesh document at path; a failure is an
// inputError.
func readMeshDocument(path string) (*result.MeshDocument, error) {
	doc, err := result.ReadMeshFile(path)
	if err != nil {
		return nil, inputError{err}
	}
	return doc, nil
}
