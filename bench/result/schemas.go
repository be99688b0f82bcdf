package result

import (
	_ "embed"
	"encoding/json"
)

// The JSON Schemas of the documents, as shipped; package result/schema
// validates against them. Their $id values are what their $refs resolve
// against; nothing is fetched.
var (
	//go:embed schema.json
	SchemaJSON []byte // the result document (Document)
	//go:embed mr.schema.json
	MRSchemaJSON []byte // the `rdmabench mr` document
	//go:embed mesh.schema.json
	MeshSchemaJSON []byte // the `rdmabench mesh` document
	//go:embed doctor.schema.json
	DoctorSchemaJSON []byte // the `rdmabench doctor` document
	//go:embed accept.schema.json
	AcceptSchemaJSON []byte // the `rdmabench accept` document
)

// IsMRDocument reports whether data is, by its shape, an `rdmabench mr`
// document: a JSON object with a top-level "mr" member, which only
// MRDocument has. Anything else is taken for a result document.
func IsMRDocument(data []byte) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return false
	}
	_, ok := obj["mr"]
	return ok
}
