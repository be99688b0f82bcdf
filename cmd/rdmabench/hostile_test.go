package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// readersOf are the command lines that read a document of kind (FILE
// stands for it): every reader a user could hand it to.
func readersOf(kind string) [][]string {
	switch kind {
	case "result":
		return [][]string{{"compare", "FILE"}, {"compare", "--baseline", fixtureA, "FILE"}, {"plot", "-o", "OUT.svg", "FILE"},
			{"report", "FILE"}, {"report", "--tsv", "FILE"}}
	case "mesh":
		return [][]string{{"compare", "FILE"}, {"plot", "-o", "OUT.svg", "FILE"}}
	case "cliffs":
		return [][]string{{"plot", "-o", "OUT.svg", "FILE"}, {"compare", "FILE"}}
	}
	return [][]string{{"compare", "FILE"}, {"report", "FILE"}, {"plot", "-o", "OUT.svg", "FILE"}}
}

func withFile(args []string, file, out string) []string {
	a := make([]string, len(args))
	for i, s := range args {
		a[i] = strings.NewReplacer("OUT", out, "FILE", file).Replace(s)
		if s == "FILE" {
			a[i] = file
		}
	}
	return a
}

// TestHostileDocuments: every reader refuses every document of the hostile
// corpus with exit 8, naming the file and the JSON path, and accepts every
// real document of a kind it reads.
func TestHostileDocuments(t *testing.T) {
	hs := resulttest.HostileDocuments(t)
	if len(hs) < 30 {
		t.Fatalf("%d hostile documents, want at least 30", len(hs))
	}
	dir := t.TempDir()
	for i, h := range hs {
		file := filepath.Join(dir, fmt.Sprintf("hostile%02d.json", i))
		if err := os.WriteFile(file, h.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range readersOf(h.Kind) {
			a := withFile(args, file, filepath.Join(dir, "out"))
			var out, errOut bytes.Buffer
			code := run(a, &out, &errOut)
			msg := errOut.String()
			if code != exitInput || !strings.Contains(msg, h.Path+":") || !strings.Contains(msg, file) {
				t.Errorf("%s: rdmabench %s: exit %d (want 8), stderr lacks %q or the file:\n%s%s", h.Name, strings.Join(args, " "), code, h.Path, msg, out.String())
			}
		}
	}
}

// TestRealDocumentsRead: compare, plot and report accept every real
// document of the kinds they read.
func TestRealDocumentsRead(t *testing.T) {
	dir := t.TempDir()
	for name, b := range resulttest.RealFiles(t) {
		kind := result.KindOf(b)
		var cmds [][]string
		switch kind {
		case "result":
			cmds = [][]string{{"compare", "FILE"}, {"report", "FILE"}}
		case "mesh":
			cmds = [][]string{{"compare", "FILE"}}
		case "cliffs":
			cmds = [][]string{{"plot", "-o", "OUT.svg", "FILE"}}
		default:
			continue
		}
		file := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range cmds {
			var out, errOut bytes.Buffer
			if code := run(withFile(args, file, filepath.Join(dir, "out")), &out, &errOut); code != exitOK {
				t.Errorf("%s: rdmabench %s: exit %d\n%s", name, strings.Join(args, " "), code, errOut.String())
			}
		}
	}
}

// TestReadersBounded: each reader, run as the binary on each hostile
// document, on a valid document of nearly 1 MiB and on a file over the
// input limit, stays under 256 MiB of resident memory and 5 s.
func TestReadersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary once per document")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type input struct {
		name, kind string
		data       []byte
		env        []string
	}
	var inputs []input
	for _, h := range resulttest.HostileDocuments(t) {
		inputs = append(inputs, input{h.Name, h.Kind, h.Data, nil})
	}
	big := bytes.Repeat([]byte(" "), 1<<20)
	inputs = append(inputs, input{"1 MiB over a 64 KiB limit", "result", big, []string{maxInputEnv + "=65536"}})
	deep := []byte(strings.Repeat("[", 1<<19) + strings.Repeat("]", 1<<19))
	inputs = append(inputs, input{"half a million nested arrays", "result", deep, nil})
	for i, in := range inputs {
		file := filepath.Join(dir, fmt.Sprintf("in%02d.json", i))
		if err := os.WriteFile(file, in.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range readersOf(in.kind) {
			cmd := exec.Command(exe, withFile(args, file, filepath.Join(dir, "out"))...)
			cmd.Env = append(append(os.Environ(), asMainEnv+"=1"), in.env...)
			start := time.Now()
			out, _ := cmd.CombinedOutput()
			wall := time.Since(start)
			ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			rss := int64(0)
			if ru != nil {
				rss = ru.Maxrss << 10 // KiB on Linux
			}
			if code := cmd.ProcessState.ExitCode(); code != exitInput {
				t.Errorf("%s: %s: exit %d, want 8:\n%s", in.name, strings.Join(args, " "), code, out)
			}
			if rss > 256<<20 || wall > 5*time.Second {
				t.Errorf("%s: %s: %d MiB resident, %v: over 256 MiB or 5 s", in.name, strings.Join(args, " "), rss>>20, wall)
			}
		}
	}
}
