package perftest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/fabric"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestImportRefusesNonRows: a line of a result table that is not one of
// perftest's rows (cut short, run on) is refused naming its line, not
// skipped or guessed at; a row perftest could not print (a size of 0) is
// refused by the document's check, naming the field.
func TestImportRefusesNonRows(t *testing.T) {
	b, err := os.ReadFile("testdata/perftest-6.06/send_lat.client.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	row := -1
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 3 && allDigits(f[0]) && i > 0 && strings.Contains(strings.Join(lines[:i], "\n"), "#bytes") {
			row = i
			break
		}
	}
	if row < 0 {
		t.Fatal("no result row in the fixture")
	}
	for _, c := range []struct{ name, line string }{
		{"cut short", strings.Join(strings.Fields(lines[row])[:3], " ")},
		{"run on", lines[row] + " 17.5"},
	} {
		edited := append(append(append([]string{}, lines[:row]...), c.line), lines[row+1:]...)
		_, err := ParsePrinted([]byte(strings.Join(edited, "\n")))
		var pe *ParseError
		if !errors.Is(err, ErrNotARow) || !errors.As(err, &pe) || pe.Line != row+1 {
			t.Errorf("%s: %v, want ErrNotARow at line %d", c.name, err, row+1)
		}
	}
	f := strings.Fields(lines[row])
	f[0] = "0"
	edited := append(append(append([]string{}, lines[:row]...), "  "+strings.Join(f, "  ")), lines[row+1:]...)
	p, err := ParsePrinted([]byte(strings.Join(edited, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Import(p, "x", ImportOptions{})
	if err == nil {
		err = doc.Check()
	}
	if err == nil || !strings.Contains(err.Error(), "results[0].size_bytes") {
		t.Errorf("a row of 0 bytes: %v", err)
	}
}

// TestImportEnvironmentAbsent: what perftest did not print is absent from
// the imported document (not zero or false), the document validates
// against the schema, and a gate between a native and an imported result
// names only the environment fields both know.
func TestImportEnvironmentAbsent(t *testing.T) {
	p := readPrinted(t, "perftest-6.06/send_lat.client.txt")
	doc, err := Import(p, "send_lat.client.txt", ImportOptions{Version: "6.06"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "imported.json")
	if err := result.WriteJSONFile(path, doc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(b); err != nil {
		t.Errorf("the imported document does not validate: %v", err)
	}
	for _, absent := range []string{`"software_rdma"`, `"port"`, `"num_cpu"`, `"kernel"`, `"engine_pinned_cpu"`, `"vendor_id"`} {
		if strings.Contains(string(b), absent) {
			t.Errorf("the imported document holds %s, which perftest did not print", absent)
		}
	}
	if !strings.Contains(string(b), `"device": "rxe0"`) {
		t.Error("the imported document lacks the device perftest printed")
	}
	imported, err := result.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if imported.EnvKnown("num_cpu") || !imported.EnvKnown("device") {
		t.Error("EnvKnown after reading")
	}
	native, err := result.ReadJSONFile("../plot/testdata/a.json")
	if err != nil {
		t.Fatal(err)
	}
	diffs := compare.EnvDiffs(native, imported)
	if len(diffs) > 7 {
		t.Errorf("%d environment differences between a native and an imported result, want only fields perftest printed: %v", len(diffs), diffs)
	}
	for _, d := range diffs {
		for _, unknown := range []string{"num_cpu", "software_rdma", "port", "kernel"} {
			if d.Field == unknown {
				t.Errorf("difference in %s, which perftest did not print", unknown)
			}
		}
	}
}

// FuzzImport: import end to end: perftest's output parsed, imported,
// checked as every reader checks a document, written, read back and laid
// out by compare and report, within the memory ceiling.
func FuzzImport(f *testing.F) {
	for _, dir := range []string{"testdata/perftest-6.06", "testdata/perftest-newer"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				f.Add(b)
			}
		}
	}
	out := filepath.Join(f.TempDir(), "imported.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		resulttest.Bounded(t, func() {
			p, err := ParsePrinted(b)
			if err != nil {
				return
			}
			doc, err := Import(p, "fuzz", ImportOptions{})
			if err != nil {
				return
			}
			if doc.Check() != nil {
				return
			}
			if err := result.WriteJSONFile(out, doc); err != nil {
				t.Fatal(err)
			}
			back, err := result.ReadJSONFile(out)
			if err != nil {
				t.Fatalf("an imported document that passed its check is refused on reading: %v", err)
			}
			docs := []*result.Document{back, back}
			_ = compare.Compare(docs, []string{"a", "b"}).WriteTable(io.Discard, nil, result.UnitMiB, report.Width)
			_ = fabric.New(docs).WriteText(io.Discard, result.UnitMiB, report.Width)
		})
	})
}
