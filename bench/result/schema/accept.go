package schema

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmabench/rdmabench/bench/result"
)

// AcceptURL is accept.schema.json's $id (the document of `rdmabench
// accept --json`, result.AcceptDocument; it stands alone, without
// $refs to the other schemas).
const AcceptURL = "https://github.com/rdmabench/rdmabench/bench/result/accept.schema.json"

var acceptSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(result.AcceptSchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("result: schema accept.schema.json: %w", err)
	}
	if err := c.AddResource(AcceptURL, doc); err != nil {
		return nil, fmt.Errorf("result: schema accept.schema.json: %w", err)
	}
	return c.Compile(AcceptURL)
})

// ValidateAcceptDocument checks data, a node acceptance document, against
// accept.schema.json, as ValidateDocument does.
func ValidateAcceptDocument(data []byte) error {
	s, err := acceptSchema()
	if err != nil {
		return err
	}
	return Against(s, data)
}
