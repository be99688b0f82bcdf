package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestDoctorJSON runs 'rdmabench doctor --json' on this host (whatever it
// has: on the build host usually no RDMA device) and checks the document
// against doctor.schema.json, a finding per check, and the table's rows.
func TestDoctorJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	var out, errOut bytes.Buffer
	code := run([]string{"doctor", "--json", path}, &out, &errOut)
	if code != exitOK && code != exitDoctor {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateDoctorDocument(b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !result.IsDoctorDocument(b) {
		t.Error("not recognised as a doctor document")
	}
	for _, name := range doctor.Names() {
		if strings.HasPrefix(name, "peer-") {
			if strings.Contains(string(b), `"`+name+`"`) {
				t.Errorf("%s without a peer", name)
			}
			continue
		}
		if !strings.Contains(string(b), `"check": "`+name+`"`) {
			t.Errorf("no %s finding in the document", name)
		}
		if !strings.Contains(out.String(), "\n  "+name+" ") {
			t.Errorf("no %s row in the table:\n%s", name, out.String())
		}
	}
	if !strings.Contains(out.String(), "\nStatus: ") {
		t.Errorf("no status line:\n%s", out.String())
	}
}

// TestDoctorExitCode: a failed check exits 10 (the pair stage of make test
// produces it for real, across two MTUs); one wrapped too.
func TestDoctorExitCode(t *testing.T) {
	if c := exitCode(doctorFailed{1}); c != exitDoctor {
		t.Errorf("exit %d, want %d", c, exitDoctor)
	}
	if c := exitCode(fmt.Errorf("doctor: %w", doctorFailed{2})); c != exitDoctor {
		t.Errorf("wrapped: exit %d, want %d", c, exitDoctor)
	}
}
