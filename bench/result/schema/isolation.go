package schema

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmabench/rdmabench/bench/result"
)

// IsolationURL is isolation.schema.json's $id (the document of `rdmabench
// isolation --json`, result.IsolationDocument; it stands alone, without
// $refs to the other schemas).
const IsolationURL = "https://github.com/rdmabench/rdmabench/bench/result/isolation.schema.json"

var isolationSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(result.IsolationSchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("result: schema isolation.schema.json: %w", err)
	}
	if err := c.AddResource(IsolationURL, doc); err != nil {
		return nil, fmt.Errorf("result: schema isolation.schema.json: %w", err)
	}
	return c.Compile(IsolationURL)
})

// ValidateIsolationDocument checks data, an isolation document, against
// isolation.schema.json, as ValidateDocument does.
func ValidateIsolationDocument(data []byte) error {
	s, err := isolationSchema()
	if err != nil {
		return err
	}
	return Against(s, data)
}
