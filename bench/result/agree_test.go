package result_test

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result/resulttest"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// schemaCannot are the hostile documents whose fault is a relation between
// values (an order, a sum, a decoded histogram, a repeat) that JSON Schema
// cannot state: only the tool's check (result.CheckAny) refuses them.
var schemaCannot = map[string]bool{
	"the same test twice": true, "min that is not the histogram's": true, "p99 below p50": true, "max below p99.9": true, "histogram that does not decode": true,
	"histogram that disagrees with samples": true, "mean above max": true, "ends before it starts": true,
	"percentiles out of order": true, "mesh: client rank out of range": true, "cliffs: median above max": true,
	"cliffs: knee off the curve": true, "cliffs: falling ladder": true, "isolation: p99 below p50": true,
	"isolation: interval upside down": true, "doctor: status better than its findings": true, "mr: max below p99.9": true,
}

// TestSchemaAgreesWithCheck: the shipped JSON Schemas refuse every hostile
// document whose fault a schema can state, as the tool does, and accept
// every real document, as the tool does (TestRealDocumentsAccepted).
func TestSchemaAgreesWithCheck(t *testing.T) {
	for _, h := range resulttest.HostileDocuments(t) {
		err := schema.Validate(h.Data)
		if schemaCannot[h.Name] {
			continue
		}
		if err == nil {
			t.Errorf("%s: the schema accepts what the tool refuses at %s", h.Name, h.Path)
		}
	}
	for name, b := range resulttest.RealFiles(t) {
		if err := schema.Validate(b); err != nil {
			t.Errorf("%s: the schema refuses a real document: %v", name, err)
		}
	}
}
