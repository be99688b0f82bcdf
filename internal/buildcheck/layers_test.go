package buildcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listed is one package of go list -deps -json.
type listed struct {
	ImportPath string
	Standard   bool
	CgoFiles   []string
	Imports    []string
}

// tagSets are the build tag sets the layer test lists the module under:
// the default build, and the one that adds the experiments' files and the
// libpmix client.
var tagSets = []string{"", "experiment,pmix"}

// goListDeps is go list -e -deps -json ./... under tags, with cgo on (so
// that cgo packages show their cgo files), by import path.
func goListDeps(t *testing.T, tags string) map[string]*listed {
	t.Helper()
	root, g := moduleRoot(t), goTool(t)
	cmd := exec.Command(g, "list", "-e", "-deps", "-tags", tags, "-json=ImportPath,Standard,CgoFiles,Imports", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./... (tags %q): %v", tags, err)
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -json: %v", err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// rel is a module package's path relative to the module ("" if outside it).
func rel(path string) (string, bool) {
	if path == Module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, Module+"/")
	return r, ok
}

// layerIndex maps each package of the table to its layer (0: the bottom).
func layerIndex(t *testing.T) map[string]int {
	t.Helper()
	at := map[string]int{}
	for i, l := range Layers {
		for _, p := range l.Pkgs {
			if j, dup := at[p]; dup {
				t.Errorf("layers.go: %s is in two layers, %s and %s", p, layerName(j), layerName(i))
			}
			at[p] = i
		}
	}
	return at
}

// layerName is `layer 3 "definitions", pure`, counted from 1 at the bottom.
func layerName(i int) string {
	return fmt.Sprintf("layer %d %q, %s", i+1, Layers[i].Name, Layers[i].Kind)
}

// usesCgo says why a non-standard package counts as cgo: its own cgo files,
// an import of "C", or being verbs.
func usesCgo(p *listed) string {
	switch {
	case len(p.CgoFiles) == 1:
		return "has a cgo file, " + p.CgoFiles[0]
	case len(p.CgoFiles) > 1:
		return fmt.Sprintf("has %d cgo files (%s, ...)", len(p.CgoFiles), p.CgoFiles[0])
	case slices.Contains(p.Imports, "C"):
		return `imports "C"`
	case p.ImportPath == Module+"/verbs":
		return "is verbs"
	}
	return ""
}

// cgoPath is the first import chain from p to a non-standard package that
// uses cgo, and why it does; nil if none.
func cgoPath(pkgs map[string]*listed, p string) ([]string, string) {
	seen := map[string]bool{}
	var walk func(path []string) ([]string, string)
	walk = func(path []string) ([]string, string) {
		cur := pkgs[path[len(path)-1]]
		if cur == nil || cur.Standard || seen[cur.ImportPath] {
			return nil, ""
		}
		seen[cur.ImportPath] = true
		if why := usesCgo(cur); why != "" {
			return path, why
		}
		for _, imp := range cur.Imports {
			if found, why := walk(append(slices.Clip(path), imp)); found != nil {
				return found, why
			}
		}
		return nil, ""
	}
	return walk([]string{p})
}

// TestLayers: every package of the module is in the layer table
// (layers.go), each of its imports goes to a lower layer, and nothing under
// a package of a pure layer uses cgo. It reads go list -deps -json ./...
// under each of tagSets; test files' imports are not checked.
func TestLayers(t *testing.T) {
	at := layerIndex(t)
	inModule := map[string]bool{}
	reported := map[string]bool{} // the same finding under another tag set
	errorf := func(format string, args ...any) {
		t.Helper()
		if msg := fmt.Sprintf(format, args...); !reported[msg] {
			reported[msg] = true
			t.Error(msg)
		}
	}
	for _, tags := range tagSets {
		pkgs := goListDeps(t, tags)
		names := make([]string, 0, len(pkgs))
		for path := range pkgs {
			names = append(names, path)
		}
		slices.Sort(names)
		for _, path := range names {
			p := pkgs[path]
			from, ok := rel(path)
			if !ok {
				continue
			}
			inModule[from] = true
			li, ok := at[from]
			if !ok {
				errorf("package %s is in no layer: add it to Layers in internal/buildcheck/layers.go, in the lowest layer above every package it imports, and to the layer table in docs/architecture.md", from)
				continue
			}
			for _, imp := range p.Imports {
				to, ok := rel(imp)
				if !ok {
					continue
				}
				lj, ok := at[to]
				if !ok {
					continue // reported as a package in no layer
				}
				switch {
				case lj == li:
					errorf("%s (%s) imports %s (%s): an import sideways, inside one layer; a package imports only packages of lower layers (internal/buildcheck/layers.go)", from, layerName(li), to, layerName(lj))
				case lj > li:
					errorf("%s (%s) imports %s (%s): an import that goes up; a package imports only packages of lower layers (internal/buildcheck/layers.go)", from, layerName(li), to, layerName(lj))
				}
			}
			if Layers[li].Kind != Pure {
				continue
			}
			if chain, why := cgoPath(pkgs, path); chain != nil {
				for i := range chain {
					chain[i], _ = rel(chain[i])
				}
				errorf("%s (%s) depends on cgo: %s, and %s %s", from, layerName(li), strings.Join(chain, " → "), chain[len(chain)-1], why)
			}
		}
	}
	for _, l := range Layers {
		for _, p := range l.Pkgs {
			if !inModule[p] {
				t.Errorf("layers.go names %s, which go list does not list as a package of the module", p)
			}
		}
	}
}

// purePackages are the packages of the pure layers, as go build arguments.
func purePackages() []string {
	var pkgs []string
	for _, l := range Layers {
		if l.Kind == Pure {
			for _, p := range l.Pkgs {
				pkgs = append(pkgs, "./"+p)
			}
		}
	}
	return pkgs
}

// layersHeader opens the layer table in docs/architecture.md.
const layersHeader = "| layer | name | kind | packages | holds |"

// layersMarkdown is the layer table as docs/architecture.md shows it: top
// first, so that imports go down the table.
func layersMarkdown() string {
	var b strings.Builder
	b.WriteString(layersHeader + "\n|---|---|---|---|---|\n")
	for i := len(Layers) - 1; i >= 0; i-- {
		l := Layers[i]
		pkgs := make([]string, len(l.Pkgs))
		for j, p := range l.Pkgs {
			pkgs[j] = "`" + p + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", i+1, l.Name, l.Kind, strings.Join(pkgs, ", "), l.About)
	}
	return b.String()
}

// TestLayersDoc: docs/architecture.md's layer table is layers.go's, row for
// row (the same packages in the same layers, in the same order), so that
// the two cannot drift.
func TestLayersDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n"+layersHeader+"\n")
	if i < 0 {
		t.Fatalf("docs/architecture.md has no layer table (a line %q); it should read:\n\n%s", layersHeader, layersMarkdown())
	}
	var got strings.Builder
	for _, line := range strings.SplitAfter(doc[i+1:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		got.WriteString(line)
	}
	want := layersMarkdown()
	if got.String() == want {
		return
	}
	gl, wl := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
	for k := 0; k < max(len(gl), len(wl)); k++ {
		var g, w string
		if k < len(gl) {
			g = gl[k]
		}
		if k < len(wl) {
			w = wl[k]
		}
		if g != w {
			t.Errorf("docs/architecture.md's layer table, line %d:\n got: %s\nwant: %s", k+1, g, w)
			break
		}
	}
	t.Errorf("docs/architecture.md's layer table differs from Layers (internal/buildcheck/layers.go); it should read:\n\n%s", want)
}
