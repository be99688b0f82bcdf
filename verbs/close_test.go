package verbs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestCloseNil: Close on a typed nil of every type that has one returns nil,
// so cleanup code needs no nil checks; the table must list every such type.
func TestCloseNil(t *testing.T) {
	closers := []io.Closer{
		(*Context)(nil),
		(*PD)(nil),
		(*Buffer)(nil),
		(*MR)(nil),
		(*CQ)(nil),
		(*QP)(nil),
		(*SRQ)(nil),
		(*AH)(nil),
		(*Engine)(nil),
		(*Pool)(nil),
		(*MROpLoop)(nil),
		(*EventChannel)(nil),
		(*CMID)(nil),
		(*AsyncWatcher)(nil),
		(*PostWork)(nil),
	}
	var tested []string
	for _, c := range closers {
		name := reflect.TypeOf(c).Elem().Name()
		tested = append(tested, name)
		t.Run(name, func(t *testing.T) {
			if err := c.Close(); err != nil {
				t.Errorf("(*%s)(nil).Close() = %v, want nil", name, err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("second (*%s)(nil).Close() = %v, want nil", name, err)
			}
		})
	}
	want := closeTypes(t)
	if want == nil {
		t.Log("no source files here: the table's completeness is checked where the sources are")
		return
	}
	if fmt.Sprint(sorted(tested)) != fmt.Sprint(want) {
		t.Errorf("types with a Close method: %v; the table tests %v", want, sorted(tested))
	}
}

// closeTypes lists the receiver types of the package's Close methods, read
// from its source files; nil where they are not at hand (a test binary run
// elsewhere, as in the SoftRoCE guest).
func closeTypes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Close" {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				names = append(names, star.X.(*ast.Ident).Name)
			}
		}
	}
	return sorted(names)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// TestNewEngineNilMemory: a typed nil *MR or *PoolBuf is refused like a nil
// Memory, without a panic.
func TestNewEngineNilMemory(t *testing.T) {
	for _, m := range []Memory{nil, (*MR)(nil), (*PoolBuf)(nil)} {
		g, err := NewEngine(EngineConfig{QP: &QP{}, MR: m, Size: 8, TxDepth: 1, CQMod: 1, RxDepth: 1, Samples: 16})
		if err == nil || !strings.Contains(err.Error(), "needs a QP and an MR") {
			g.Close()
			t.Errorf("NewEngine with MR %#v: %v, want the missing-MR error", m, err)
		}
	}
}
