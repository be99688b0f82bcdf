package result_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// srcDirs are searched, in order, for the Go types the schemas describe:
// this package (where they are moving), the bench package, verbs (ODPCaps)
// and hist (Value). The test reads the source rather than importing bench,
// which will import this package.
var srcDirs = []string{".", "..", filepath.Join("..", "mr"), filepath.Join("..", "..", "verbs"), filepath.Join("..", "..", "hist")}

// goTypes maps each Go struct to its object in the schemas: file and $defs
// name ("" for the document itself).
var goTypes = []struct{ name, file, def string }{
	{"Document", "schema.json", ""},
	{"Env", "schema.json", "Env"},
	{"EnvChecks", "schema.json", "EnvChecks"},
	{"Result", "schema.json", "Result"},
	{"Latency", "schema.json", "Latency"},
	{"Bandwidth", "schema.json", "Bandwidth"},
	{"CPUUsage", "schema.json", "CPUUsage"},
	{"LoadResult", "schema.json", "LoadResult"},
	{"OpenLoop", "schema.json", "OpenLoop"},
	{"Interval", "schema.json", "Interval"},
	{"ConnSetup", "schema.json", "ConnSetup"},
	{"QPResult", "schema.json", "QPResult"},
	{"CounterDeltas", "schema.json", "CounterDeltas"},
	{"PortCounters", "schema.json", "PortCounters"},
	{"BidirSides", "schema.json", "BidirSides"},
	{"SideResult", "schema.json", "SideResult"},
	{"Verification", "schema.json", "Verification"},
	{"mr.Document", "mr.schema.json", ""},
	{"mr.Report", "mr.schema.json", "Report"},
	{"mr.RegResult", "mr.schema.json", "RegResult"},
	{"mr.SkippedSize", "mr.schema.json", "SkippedSize"},
	{"mr.Ops", "mr.schema.json", "Ops"},
	{"mr.OpResult", "mr.schema.json", "OpResult"},
	{"ODPCaps", "mr.schema.json", "ODPCaps"},
	{"MeshDocument", "mesh.schema.json", ""},
	{"MeshRank", "mesh.schema.json", "MeshRank"},
	{"MeshPair", "mesh.schema.json", "MeshPair"},
	{"DoctorDocument", "doctor.schema.json", ""},
	{"DoctorHost", "doctor.schema.json", "DoctorHost"},
	{"DoctorFinding", "doctor.schema.json", "DoctorFinding"},
	{"DoctorCheck", "doctor.schema.json", "DoctorCheck"},
}

// namedDefs are the Go types with their own JSON form (MarshalJSON,
// MarshalText) and the $defs that describe it.
var namedDefs = map[string]string{"Nanos": "Nanos", "Value": "HistValue", "ODPOps": "ODPOps"}

// addedAfterV1 are members without omitempty that schema.json does not
// require: schema_version 1 documents written before they existed lack
// them (bench/testdata).
var addedAfterV1 = map[string]bool{"Env.checks": true, "Result.link_utilization": true}

// parseStructs returns the struct types declared in dirs' non-test Go
// files, the first declaration of a name winning (aliases are skipped).
func parseStructs(t *testing.T) map[string]*ast.StructType {
	t.Helper()
	out := map[string]*ast.StructType{}
	fset := token.NewFileSet()
	for _, dir := range srcDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s (run the test from its package directory)", dir)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.TYPE {
					continue
				}
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					st, ok := ts.Type.(*ast.StructType)
					if ok && !ts.Assign.IsValid() && out[ts.Name.Name] == nil {
						out[ts.Name.Name] = st
					}
					if ok && !ts.Assign.IsValid() {
						out[f.Name.Name+"."+ts.Name.Name] = st // package-qualified, e.g. "mr.Document"
					}
				}
			}
		}
	}
	return out
}

// goField is one JSON member of a Go struct.
type goField struct {
	json      string
	omitempty bool
	typ       ast.Expr
}

// jsonFields lists the JSON members of st, embedded structs flattened.
func jsonFields(t *testing.T, structs map[string]*ast.StructType, st *ast.StructType) []goField {
	t.Helper()
	var out []goField
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			s, err := strconv.Unquote(f.Tag.Value)
			if err != nil {
				t.Fatal(err)
			}
			tag = reflect.StructTag(s).Get("json")
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if len(f.Names) == 0 { // embedded
			id, ok := f.Type.(*ast.Ident)
			if sel, isSel := f.Type.(*ast.SelectorExpr); isSel {
				id, ok = sel.Sel, true // another package's struct, e.g. result.Document in mr
			}
			if !ok || tag != "" || structs[id.Name] == nil {
				t.Fatalf("embedded field %v: only untagged local structs are handled", f.Type)
			}
			out = append(out, jsonFields(t, structs, structs[id.Name])...)
			continue
		}
		for _, n := range f.Names {
			if !n.IsExported() {
				continue
			}
			jn := name
			if jn == "" {
				jn = n.Name
			}
			out = append(out, goField{json: jn, omitempty: slices.Contains(strings.Split(opts, ","), "omitempty"), typ: f.Type})
		}
	}
	return out
}

// typeName is the name of a (possibly package-qualified) named type, or "".
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// checkType checks that member prop of a schema fits Go type e.
func checkType(t *testing.T, docs map[string]schemaDoc, at string, e ast.Expr, prop subschema) {
	t.Helper()
	if p, ok := e.(*ast.StarExpr); ok {
		e = p.X
	}
	nodes := expand(t, docs, prop)
	var types []string
	var refs []string
	for _, n := range nodes {
		switch ty := n.node["type"].(type) {
		case string:
			types = append(types, ty)
		case []any:
			for _, x := range ty {
				types = append(types, x.(string))
			}
		}
		if r, ok := n.node["$ref"].(string); ok {
			refs = append(refs, r)
		}
		vals, _ := n.node["enum"].([]any)
		if c, ok := n.node["const"]; ok {
			vals = append(vals, c)
		}
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				types = append(types, "string")
			case bool:
				types = append(types, "boolean")
			case float64:
				if v == float64(int64(v)) {
					types = append(types, "integer")
				} else {
					types = append(types, "number")
				}
			}
		}
	}
	slices.Sort(types)
	types = slices.Compact(types)
	refTo := func(def string) bool {
		return slices.ContainsFunc(refs, func(r string) bool { return strings.HasSuffix(r, "#/$defs/"+def) })
	}
	if a, ok := e.(*ast.ArrayType); ok {
		if !slices.Equal(types, []string{"array"}) {
			t.Errorf("%s: Go slice, schema types %v", at, types)
			return
		}
		for _, n := range nodes {
			if items, ok := n.node["items"].(map[string]any); ok {
				checkType(t, docs, at+"[]", a.Elt, subschema{n.file, items})
				return
			}
		}
		t.Errorf("%s: array schema without items", at)
		return
	}
	if m, ok := e.(*ast.MapType); ok {
		if !slices.Equal(types, []string{"object"}) {
			t.Errorf("%s: Go map, schema types %v", at, types)
			return
		}
		for _, n := range nodes {
			if pp, ok := n.node["patternProperties"].(map[string]any); ok && len(pp) == 1 {
				for _, v := range pp {
					checkType(t, docs, at+"{}", m.Value, subschema{n.file, v.(map[string]any)})
				}
				return
			}
		}
		t.Errorf("%s: Go map, schema without one patternProperties entry for its values", at)
		return
	}
	name := typeName(e)
	want := map[string][]string{
		"int": {"integer"}, "int64": {"integer"}, "int32": {"integer"}, "uint32": {"integer"}, "uint64": {"integer"},
		"float64": {"number"}, "string": {"string"}, "bool": {"boolean"}, "Time": {"string"},
	}[name]
	switch {
	case want != nil:
		if name == "float64" && slices.Equal(types, []string{"integer"}) && len(refs) == 0 && nodes[0].node["const"] != nil {
			return // a float64 the code always sets to one whole value, such as 1e9
		}
		if !slices.Equal(types, want) {
			t.Errorf("%s: Go %s, schema types %v; want %v", at, name, types, want)
		}
	case namedDefs[name] != "":
		if !refTo(namedDefs[name]) {
			t.Errorf("%s: Go %s, schema does not use $defs/%s (refs %v)", at, name, namedDefs[name], refs)
		}
	default:
		def := name
		if !refTo(def) {
			t.Errorf("%s: Go %s, schema does not use $defs/%s (refs %v)", at, name, def, refs)
		}
	}
}

// TestStructsMatchSchema compares the Go structs' JSON members with the
// schemas: the same member names, required exactly where there is no
// omitempty (except addedAfterV1), and types that fit. A field added to a
// struct without the schema, or the other way round, fails here.
func TestStructsMatchSchema(t *testing.T) {
	structs := parseStructs(t)
	docs := loadSchemas(t)
	for _, g := range goTypes {
		st := structs[g.name]
		if st == nil {
			t.Errorf("struct %s not found in %v", g.name, srcDirs)
			continue
		}
		obj := docs[g.file].root
		if g.def != "" {
			defs, _ := docs[g.file].root["$defs"].(map[string]any)
			obj, _ = defs[g.def].(map[string]any)
			if obj == nil {
				t.Errorf("%s: no $defs/%s", g.file, g.def)
				continue
			}
		}
		props, _ := obj["properties"].(map[string]any)
		var required []string
		req, _ := obj["required"].([]any) // absent: nothing required
		if g.def == "Env" {               // Env's required members are EnvRequired's (a perftest import holds fewer)
			defs, _ := docs[g.file].root["$defs"].(map[string]any)
			er, _ := defs["EnvRequired"].(map[string]any)
			req, _ = er["required"].([]any)
		}
		for _, r := range req {
			required = append(required, r.(string))
		}
		fields := jsonFields(t, structs, st)
		var names, wantReq []string
		for _, f := range fields {
			names = append(names, f.json)
			if !f.omitempty && !addedAfterV1[g.name+"."+f.json] {
				wantReq = append(wantReq, f.json)
			}
			p, ok := props[f.json]
			if !ok {
				continue
			}
			pm, ok := p.(map[string]any)
			if !ok {
				if !f.omitempty { // "peer": false in mr.schema.json
					t.Errorf("%s.%s: schema forbids a member the Go struct always writes", g.name, f.json)
				}
				continue
			}
			checkType(t, docs, g.name+"."+f.json, f.typ, subschema{g.file, pm})
		}
		var schemaNames []string
		for k := range props {
			schemaNames = append(schemaNames, k)
		}
		for _, s := range [][]string{names, schemaNames, wantReq, required} {
			sort.Strings(s)
		}
		if !slices.Equal(names, schemaNames) {
			t.Errorf("%s (%s#%s): Go members %v, schema properties %v", g.name, g.file, g.def, names, schemaNames)
		}
		if !slices.Equal(wantReq, required) {
			t.Errorf("%s (%s#%s): members without omitempty %v, schema requires %v", g.name, g.file, g.def, wantReq, required)
		}
	}
}
