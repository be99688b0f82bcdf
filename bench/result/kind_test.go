package result

import (
	"strings"
	"testing"
)

func TestKindProbeAndRead(t *testing.T) {
	for _, c := range []struct {
		data   string
		cliffs bool   // IsCliffsDocument
		err    string // ReadCliffs' error, "" for none
	}{
		{`{"kind": "cliffs", "schema_version": 1, "figure_unit": "Mpps", "runs": 1, "points": [{"value": 2, "stage": "ladder", "runs": [1], "median": 1, "min": 1, "max": 1}]}`, true, ""},
		{`{"kind": "cliffs", "schema_version": 1}`, true, `figure_unit: impossible value`},
		{`{"kind": "isolation"}`, false, `not a cliffs document (kind "isolation")`},
		{`{"results": []}`, false, `not a cliffs document (kind "")`},
		{`{"kind": 3}`, false, "cliffs document: json: cannot unmarshal"},
		{`[1, 2]`, false, "cliffs document: json: cannot unmarshal"},
		{`{`, false, "cliffs document: unexpected end of JSON input"},
	} {
		if got := IsCliffsDocument([]byte(c.data)); got != c.cliffs {
			t.Errorf("IsCliffsDocument(%s) = %v, want %v", c.data, got, c.cliffs)
		}
		d, err := ReadCliffs([]byte(c.data))
		switch {
		case c.err == "" && (err != nil || d == nil || d.Kind != KindCliffs):
			t.Errorf("ReadCliffs(%s): %v, %v", c.data, d, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ReadCliffs(%s): %v, want %q", c.data, err, c.err)
		}
	}
	if _, err := ReadIsolation([]byte(`{"kind": "cliffs"}`)); err == nil || err.Error() != `not an isolation document (kind "cliffs")` {
		t.Errorf("ReadIsolation of a cliffs document: %v", err)
	}
	for kind, is := range map[string]func([]byte) bool{KindDoctor: IsDoctorDocument, KindMesh: IsMeshDocument, KindIsolation: IsIsolationDocument} {
		if !is([]byte(`{"kind": "`+kind+`"}`)) || is([]byte(`{"kind": "x"}`)) || is([]byte(`not json`)) {
			t.Errorf("the %s probe", kind)
		}
	}
}
