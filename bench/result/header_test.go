package result

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDocumentsShareHeader: each kind's document type declares Header's
// members first, in Header's order, under the same JSON names and Go
// types (a result document without "kind"), and its Header method returns
// what a decoder of the header alone reads of it.
func TestDocumentsShareHeader(t *testing.T) {
	ht := reflect.TypeFor[Header]()
	for _, c := range []struct {
		kind string
		doc  interface{ Header() Header }
	}{
		{KindResult, &Document{SchemaVersion: 7, Tool: "t", ToolVersion: "v"}},
		{KindMesh, &MeshDocument{SchemaVersion: 7, Kind: KindMesh, Tool: "t", ToolVersion: "v"}},
		{KindCliffs, &CliffsDocument{SchemaVersion: 7, Kind: KindCliffs, Tool: "t", ToolVersion: "v"}},
		{KindIsolation, &IsolationDocument{SchemaVersion: 7, Kind: KindIsolation, Tool: "t", ToolVersion: "v"}},
		{KindDoctor, &DoctorDocument{SchemaVersion: 7, Kind: KindDoctor, Tool: "t", ToolVersion: "v"}},
		{KindAccept, &AcceptDocument{SchemaVersion: 7, Kind: KindAccept, Tool: "t", ToolVersion: "v"}},
	} {
		dt := reflect.TypeOf(c.doc).Elem()
		j := 0
		for i := range ht.NumField() {
			hf := ht.Field(i)
			name, _, _ := strings.Cut(hf.Tag.Get("json"), ",")
			if name == "kind" && c.kind == KindResult {
				continue
			}
			df := dt.Field(j)
			dname, _, _ := strings.Cut(df.Tag.Get("json"), ",")
			if dname != name || df.Type != hf.Type || df.Name != hf.Name {
				t.Errorf("%s: field %d is %s %s `json:%q`, want Header's %s %s `json:%q`", dt, j, df.Name, df.Type, dname, hf.Name, hf.Type, name)
			}
			j++
		}
		b, err := json.Marshal(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		var h Header
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatal(err)
		}
		if got := c.doc.Header(); got != h || KindOf(b) != c.kind {
			t.Errorf("%s: Header() = %+v, the JSON's header %+v, KindOf %q", dt, got, h, KindOf(b))
		}
	}
}

// TestHeaderCheck: every kind's Check starts with its header: the kind,
// then the schema version, each failure naming its member.
func TestHeaderCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"mesh kind", (&MeshDocument{Kind: "x", SchemaVersion: 1}).Check(), `kind: impossible value: kind "x", not a mesh document`},
		{"isolation kind", (&IsolationDocument{Kind: KindCliffs}).Check(), `kind: impossible value: kind "cliffs", not an isolation document`},
		{"cliffs version", (&CliffsDocument{Kind: KindCliffs, SchemaVersion: 2}).Check(), "schema_version: impossible value: schema version 2, this rdmabench reads 1"},
		{"doctor version", (&DoctorDocument{Kind: KindDoctor}).Check(), "schema_version: impossible value: schema version 0, this rdmabench reads 1"},
		{"result version", (&Document{SchemaVersion: 3, Tool: "rdmabench"}).Check(), "schema_version: impossible value: schema version 3, this rdmabench reads 1"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}
