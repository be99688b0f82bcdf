// Package schema validates rdmabench's JSON documents against their JSON
// Schemas (draft 2020-12, shipped in package result): schema.json for the
// result document of `rdmabench loopback|run --json`, mr.schema.json for
// the document of `rdmabench mr --json`, mesh.schema.json for the document
// of `rdmabench mesh --json`, doctor.schema.json for the document of
// `rdmabench doctor --json`, cliffs.schema.json (cliffs.go) for the
// document of `rdmabench cliffs --json`.
//
// It is its own package because its validator costs every process that
// links it about 70 ms of start-up under emulation (the library compiles
// its meta-schemas in init): the rdmabench binary never validates, so it
// does not import this package (TestBinaryLeavesSchemaOut in internal/buildcheck).
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The schemas' $id values: what their $refs resolve against.
const (
	DocumentURL = "https://github.com/rdmabench/rdmabench/bench/result/schema.json"
	MRURL       = "https://github.com/rdmabench/rdmabench/bench/result/mr.schema.json"
	MeshURL     = "https://github.com/rdmabench/rdmabench/bench/result/mesh.schema.json"
	DoctorURL   = "https://github.com/rdmabench/rdmabench/bench/result/doctor.schema.json"
)

type schemas struct{ doc, mr, mesh, doctor *jsonschema.Schema }

// compiled compiles both schemas once. date-time formats are asserted.
var compiled = sync.OnceValues(func() (schemas, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for url, b := range map[string][]byte{DocumentURL: result.SchemaJSON, MRURL: result.MRSchemaJSON, MeshURL: result.MeshSchemaJSON, DoctorURL: result.DoctorSchemaJSON} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return schemas{}, fmt.Errorf("result: schema %s: %w", url, err)
		}
		if err := c.AddResource(url, doc); err != nil {
			return schemas{}, fmt.Errorf("result: schema %s: %w", url, err)
		}
	}
	var s schemas
	var err error
	if s.doc, err = c.Compile(DocumentURL); err != nil {
		return schemas{}, fmt.Errorf("result: compile schema.json: %w", err)
	}
	if s.mr, err = c.Compile(MRURL); err != nil {
		return schemas{}, fmt.Errorf("result: compile mr.schema.json: %w", err)
	}
	if s.mesh, err = c.Compile(MeshURL); err != nil {
		return schemas{}, fmt.Errorf("result: compile mesh.schema.json: %w", err)
	}
	if s.doctor, err = c.Compile(DoctorURL); err != nil {
		return schemas{}, fmt.Errorf("result: compile doctor.schema.json: %w", err)
	}
	return s, nil
})

// ValidateDocument checks data, a result document (bench.Document), against
// schema.json. The error lists every violation as its JSON pointer and the
// reason, e.g. `/results/0/op: value must be one of "send", ...`.
func ValidateDocument(data []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	return Against(s.doc, data)
}

// ValidateMRDocument checks data, an `rdmabench mr` document
// (bench.MRDocument), against mr.schema.json, as ValidateDocument does.
func ValidateMRDocument(data []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	return Against(s.mr, data)
}

// ValidateMeshDocument checks data, an `rdmabench mesh` document
// (MeshDocument), against mesh.schema.json, as ValidateDocument does.
func ValidateMeshDocument(data []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	return Against(s.mesh, data)
}

// ValidateDoctorDocument checks data, an `rdmabench doctor` document
// (DoctorDocument), against doctor.schema.json, as ValidateDocument does.
func ValidateDoctorDocument(data []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	return Against(s.doctor, data)
}

// validators are the documents with a schema of their own, by kind
// (result.KindOf); any other document is a result document (schema.json).
var validators = map[string]func([]byte) error{
	result.KindCliffs:    ValidateCliffsDocument,
	result.KindIsolation: ValidateIsolationDocument,
	result.KindDoctor:    ValidateDoctorDocument,
	result.KindAccept:    ValidateAcceptDocument,
	result.KindMesh:      ValidateMeshDocument,
	result.KindMR:        ValidateMRDocument,
}

// KindOf names the kind of document data is, as Validate tells it:
// result.KindOf's name where it has a schema of its own ("cliffs",
// "isolation", "doctor", "mesh", "mr"), else "result".
func KindOf(data []byte) string {
	if k := result.KindOf(data); validators[k] != nil {
		return k
	}
	return result.KindResult
}

// Validate checks data against its kind's schema (KindOf): cliffs.schema.json,
// isolation.schema.json, doctor.schema.json, mesh.schema.json or
// mr.schema.json, and schema.json for a result document.
func Validate(data []byte) error {
	if v := validators[KindOf(data)]; v != nil {
		return v(data)
	}
	return ValidateDocument(data)
}

// Against checks data against sch, a schema compiled by the caller (a test's
// stricter variant, say), and reports violations as the Validate functions do.
func Against(sch *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	return newError(ve)
}

// Violation is one way a document breaks its schema.
type Violation struct {
	Path   string // JSON pointer of the offending value, e.g. "/results/0/op"; "" is the whole document
	Reason string // e.g. `missing property "op"`
}

func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(document)"
	}
	return p + ": " + v.Reason
}

// Error is a document that does not match its schema. Its message names
// every violation, one per line after the first.
type Error struct {
	Violations []Violation // sorted by path
}

func (e *Error) Error() string {
	if len(e.Violations) == 1 {
		return "schema violation at " + e.Violations[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d schema violations:", len(e.Violations))
	for _, v := range e.Violations {
		b.WriteString("\n  " + v.String())
	}
	return b.String()
}

// newError flattens the validator's tree of errors into its leaves: the
// inner nodes (allOf, $ref, if/then) only say that a child failed.
func newError(ve *jsonschema.ValidationError) *Error {
	var out []Violation
	seen := map[Violation]bool{}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		v := Violation{Path: pointer(e.InstanceLocation), Reason: reason(e.ErrorKind)}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return &Error{Violations: out}
}

func reason(k jsonschema.ErrorKind) string {
	if _, ok := k.(*kind.FalseSchema); ok {
		return "not allowed here"
	}
	return k.LocalizedString(english)
}

var english = message.NewPrinter(language.English)

// pointer is the RFC 6901 JSON pointer of a location.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}
