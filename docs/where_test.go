package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The maps of the code (docs/architecture.md, each package's doc.go) are
// checked against the code here: a map that names a file or a function
// that moved fails, and so does a file that no map names.

// declared are the top-level names a Go file declares: functions, types,
// variables, constants, and methods as "Type.Method".
func declared(t *testing.T, path string) (map[string]ast.Node, *ast.File) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]ast.Node{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			names[name] = d
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = s
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if i < len(s.Values) {
							names[n.Name] = s.Values[i]
						} else {
							names[n.Name] = s
						}
					}
				}
			}
		}
	}
	return names, f
}

// section is the text of the markdown section that starts with heading.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no section %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// namePair is "`name` (`path`": a name and the file that declares it.
var namePair = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_.]*)`\\s+\\(`([a-z0-9_./-]+\\.(?:go|json|c|h))`")

// TestWhereToAdd: architecture.md's "Where to add things" names, for a
// flag, a result field, a subcommand and an op (and the rest), files that
// exist and declare what it says they do.
func TestWhereToAdd(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	where := section(t, string(b), "## Where to add things")
	for _, bullet := range []string{"**A test parameter**", "**A result field**", "**A subcommand**", "**An op**"} {
		if !strings.Contains(where, bullet) {
			t.Errorf("Where to add things has no bullet %s", bullet)
		}
	}
	pairs := namePair.FindAllStringSubmatch(where, -1)
	if len(pairs) < 15 {
		t.Fatalf("found %d name (file) pairs in Where to add things, want them all", len(pairs))
	}
	decls := map[string]map[string]ast.Node{}
	for _, p := range pairs {
		name, path := p[1], filepath.Join(repoRoot, p[2])
		if !strings.HasSuffix(path, ".go") {
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), name) {
				t.Errorf("Where to add things: %s (%s): the file does not name it (%v)", name, p[2], err)
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("Where to add things: %s (%s): %v", name, p[2], err)
			continue
		}
		if decls[path] == nil {
			decls[path], _ = declared(t, path)
		}
		if decls[path][name] == nil {
			t.Errorf("Where to add things: %s is not declared in %s", name, p[2])
		}
	}
	for _, path := range []string{"bench/result/schema.json", "verbs/engine.c", "bench/proto/messages.go", "bench/proto/frame.go", "verbs/shim.h", "docs/defaults.md", "docs/perftest.md"} {
		if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
			t.Errorf("Where to add things names %s: %v", path, err)
		}
	}

	// What the named declarations do.
	flags, _ := declared(t, filepath.Join(repoRoot, "cmd/rdmabench/testflags.go"))
	if fn, ok := flags["addTestFlags"].(*ast.FuncDecl); !ok || definedFlags(fn) < 10 {
		t.Errorf("addTestFlags (cmd/rdmabench/testflags.go) does not define the test flags on its flag set")
	}
	if fn, ok := flags["testFlags.plan"].(*ast.FuncDecl); !ok || !mentions(fn, "Template") {
		t.Errorf("testFlags.plan (cmd/rdmabench/testflags.go) does not fill the plan's Template")
	}
	cli, _ := declared(t, filepath.Join(repoRoot, "cmd/rdmabench/cli.go"))
	if fn, ok := cli["subcommands"].(*ast.FuncDecl); !ok || !mentions(fn, "cmdMR") {
		t.Errorf("subcommands (cmd/rdmabench/cli.go) does not list cmdMR")
	}
	mr, _ := declared(t, filepath.Join(repoRoot, "cmd/rdmabench/mr.go"))
	if fn, ok := mr["cmdMR"].(*ast.FuncDecl); !ok || len(fn.Type.Params.List) != 1 || definedFlags(fn) == 0 {
		t.Errorf("cmdMR (cmd/rdmabench/mr.go) is not a cmdX(fs) action that defines its flags")
	}
	res, _ := declared(t, filepath.Join(repoRoot, "bench/result/result.go"))
	for _, typ := range []string{"Result", "Env"} {
		if s, ok := res[typ].(*ast.TypeSpec); !ok || !isJSONStruct(s) {
			t.Errorf("%s (bench/result/result.go) is not a struct of JSON fields", typ)
		}
	}
	ops, _ := declared(t, filepath.Join(repoRoot, "bench/spec/ops.go"))
	vocab, _ := declared(t, filepath.Join(repoRoot, "bench/result/vocab.go"))
	table, ok1 := ops["opTable"].(*ast.CompositeLit)
	names, ok2 := vocab["Ops"].(*ast.CompositeLit)
	if !ok1 || !ok2 || len(table.Elts) != len(names.Elts) || len(table.Elts) == 0 {
		t.Errorf("opTable (bench/spec/ops.go) is not a table with one row per op of Ops (bench/result/vocab.go)")
	}
	ov, _ := declared(t, filepath.Join(repoRoot, "bench/endpoint/opverbs.go"))
	if m, ok := ov["OpVerbs"].(*ast.CompositeLit); !ok || !ok2 || len(m.Elts) != len(names.Elts) {
		t.Errorf("OpVerbs (bench/endpoint/opverbs.go) does not map every op of Ops")
	}
}

// flagMethods are pflag's flag definitions.
var flagMethods = regexp.MustCompile(`^(String|Int|Int64|Uint|Bool|Float64|Duration|StringSlice|IntSlice|Count)(P|Var|VarP)?$|^Var(P)?$`)

// definedFlags counts the flags fn defines on its first parameter.
func definedFlags(fn *ast.FuncDecl) int {
	if len(fn.Type.Params.List) == 0 || len(fn.Type.Params.List[0].Names) == 0 {
		return 0
	}
	fs := fn.Type.Params.List[0].Names[0].Name
	n := 0
	ast.Inspect(fn, func(x ast.Node) bool {
		if c, ok := x.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == fs && flagMethods.MatchString(sel.Sel.Name) {
					n++
				}
			}
		}
		return true
	})
	return n
}

// mentions reports whether n uses the identifier name.
func mentions(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// isJSONStruct reports whether s is a struct type whose fields carry json tags.
func isJSONStruct(s *ast.TypeSpec) bool {
	st, ok := s.Type.(*ast.StructType)
	if !ok || len(st.Fields.List) == 0 {
		return false
	}
	for _, f := range st.Fields.List {
		if f.Tag != nil && strings.Contains(f.Tag.Value, `json:"`) {
			return true
		}
	}
	return false
}

// goFile is a Go file name in prose: "spec.go", "bench/spec/ops.go".
var goFile = regexp.MustCompile(`\b[a-z0-9_/]*[a-z0-9_]+\.go\b`)

// mappedPackages are the packages whose doc.go lists every file (bench's
// is the layer table in architecture.md, held by internal/buildcheck).
var mappedPackages = []string{"bench/spec", "bench/hostenv"}

// TestDocMap: each mapped package's doc.go names every non-test Go file of
// the package, and every file it names exists.
func TestDocMap(t *testing.T) {
	for _, pkg := range mappedPackages {
		dir := filepath.Join(repoRoot, pkg)
		_, f := declared(t, filepath.Join(dir, "doc.go"))
		if f.Doc == nil {
			t.Errorf("%s/doc.go has no package comment", pkg)
			continue
		}
		named := map[string]bool{}
		for _, m := range goFile.FindAllString(f.Doc.Text(), -1) {
			if strings.Contains(m, "/") {
				if _, err := os.Stat(filepath.Join(repoRoot, m)); err != nil {
					t.Errorf("%s/doc.go names %s: %v", pkg, m, err)
				}
				continue
			}
			named[m] = true
			if _, err := os.Stat(filepath.Join(dir, m)); err != nil {
				t.Errorf("%s/doc.go names %s, which is not in %s", pkg, m, pkg)
			}
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, path := range files {
			name := filepath.Base(path)
			if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
				continue
			}
			if !named[name] {
				t.Errorf("%s/doc.go does not name %s: add it to the file map", pkg, name)
			}
		}
	}
}

// tableRow is a row of architecture.md's package table: "| `pkg` | ...".
var tableRow = regexp.MustCompile("(?m)^\\| `([a-z0-9_/]+)` \\|(.*)$")

// backtickedGo is a Go file in backticks: "`spec.go`".
var backtickedGo = regexp.MustCompile("`([a-z0-9_/]+\\.go)`")

// TestArchitectureFiles: every Go file a row of architecture.md's package
// table names exists in that package (or, with a path, in the repository).
func TestArchitectureFiles(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRow.FindAllStringSubmatch(string(b), -1)
	var pkgs []string
	for _, r := range rows {
		pkg := r[1]
		pkgs = append(pkgs, pkg)
		for _, m := range backtickedGo.FindAllStringSubmatch(r[2], -1) {
			path := filepath.Join(repoRoot, pkg, m[1])
			if strings.Contains(m[1], "/") {
				path = filepath.Join(repoRoot, m[1])
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("architecture.md, package %s: %s does not exist", pkg, m[1])
			}
		}
	}
	for _, pkg := range mappedPackages {
		if !slices.Contains(pkgs, pkg) {
			t.Errorf("architecture.md's package table has no row for %s", pkg)
		}
	}
}
