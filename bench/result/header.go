package result

// The header every document kind shares, and the kind it names.

import "encoding/json"

// The kinds without a "kind" member: a result document, and an `rdmabench
// mr` document (a result document with an "mr" member).
const (
	KindResult = "result"
	KindMR     = "mr"
)

// Header is the members every rdmabench document opens with, whatever its
// kind: Document, MeshDocument, CliffsDocument, IsolationDocument and
// DoctorDocument each declare them first, under these JSON names (a
// result document has no "kind"), and each has a Header method that
// returns them (TestDocumentsShareHeader). A reader names a document's
// kind by its header (KindOf, Open) before it decodes the whole as that
// kind, and each kind's Check starts with the header's.
type Header struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind,omitempty"` // KindMesh, KindCliffs, ...; "" in a result document
	Tool          string `json:"tool"`           // "rdmabench"
	ToolVersion   string `json:"tool_version"`
}

// schemaVersions is the schema version this rdmabench reads of each kind
// with a header of its own.
var schemaVersions = map[string]int{
	KindResult:    SchemaVersion,
	KindMesh:      MeshSchemaVersion,
	KindCliffs:    CliffsSchemaVersion,
	KindIsolation: IsolationSchemaVersion,
	KindDoctor:    DoctorSchemaVersion,
	KindAccept:    AcceptSchemaVersion,
}

// KindOf names the kind of document data is by its header's "kind"
// (KindMesh, KindCliffs, KindIsolation, KindDoctor, or whatever else it
// says), KindMR for a document without one but with a top-level "mr"
// member, else KindResult (also for data that is not a JSON object of
// that shape). It decodes "kind" alone: a header member of the wrong type
// is for the kind's own check to name.
func KindOf(data []byte) string {
	var p struct {
		Kind string          `json:"kind"`
		MR   json.RawMessage `json:"mr"`
	}
	if json.Unmarshal(data, &p) != nil {
		return KindResult
	}
	switch {
	case p.Kind != "":
		return p.Kind
	case p.MR != nil:
		return KindMR
	}
	return KindResult
}

// isKind reports whether data is a JSON object whose "kind" is kind: the
// probe behind IsCliffsDocument, IsDoctorDocument, IsIsolationDocument and
// IsMeshDocument.
func isKind(data []byte, kind string) bool {
	var h struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(data, &h) == nil && h.Kind == kind
}

// Header returns the document's header (its Kind is "").
func (doc *Document) Header() Header {
	return Header{SchemaVersion: doc.SchemaVersion, Tool: doc.Tool, ToolVersion: doc.ToolVersion}
}

// Header returns the document's header.
func (d *MeshDocument) Header() Header {
	return Header{d.SchemaVersion, d.Kind, d.Tool, d.ToolVersion}
}

// Header returns the document's header.
func (d *CliffsDocument) Header() Header {
	return Header{d.SchemaVersion, d.Kind, d.Tool, d.ToolVersion}
}

// Header returns the document's header.
func (d *IsolationDocument) Header() Header {
	return Header{d.SchemaVersion, d.Kind, d.Tool, d.ToolVersion}
}

// Header returns the document's header.
func (d *DoctorDocument) Header() Header {
	return Header{d.SchemaVersion, d.Kind, d.Tool, d.ToolVersion}
}

// header checks h as the header of a document of kind: its kind (not for
// a result document, which has none), then its schema version.
func (c *checker) header(h Header, kind string) {
	if kind != KindResult && h.Kind != kind {
		c.fail("kind", "kind %q, not a%s %s document", h.Kind, article(kind), kind)
	}
	if v := schemaVersions[kind]; h.SchemaVersion != v {
		c.fail("schema_version", "schema version %d, this rdmabench reads %d", h.SchemaVersion, v)
	}
}
