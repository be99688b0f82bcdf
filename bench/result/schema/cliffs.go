package schema

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmabench/rdmabench/bench/result"
)

// CliffsURL is cliffs.schema.json's $id (the document of `rdmabench
// cliffs --json`, result.CliffsDocument; it stands alone, without $refs
// to the other schemas).
const CliffsURL = "https://github.com/rdmabench/rdmabench/bench/result/cliffs.schema.json"

var cliffsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(result.CliffsSchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("result: schema cliffs.schema.json: %w", err)
	}
	if err := c.AddResource(CliffsURL, doc); err != nil {
		return nil, fmt.Errorf("result: schema cliffs.schema.json: %w", err)
	}
	return c.Compile(CliffsURL)
})

// ValidateCliffsDocument checks data, a cliffs document, against
// cliffs.schema.json, as ValidateDocument does.
func ValidateCliffsDocument(data []byte) error {
	s, err := cliffsSchema()
	if err != nil {
		return err
	}
	return Against(s, data)
}
