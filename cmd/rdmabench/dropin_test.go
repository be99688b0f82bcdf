package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/dropin"
	"github.com/rdmabench/rdmabench/bench/perftest"
)

// TestDropInUsage: refused and unknown options exit 2 naming the option,
// before anything is opened; --help (stdout) and -V exit 0.
func TestDropInUsage(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		code       int
		out, err   string
	}{
		{"ib_send_lat", "-h", exitOK, "Options taken:", ""},
		{"ib_write_bw", "--version", exitOK, "Version: rdmabench", ""},
		{"ib_send_lat", "-U 127.0.0.1", exitUsage, "", "-U: not supported"},
		{"ib_write_bw", "--run_infinitely 127.0.0.1", exitUsage, "", "--run_infinitely: not supported"},
		{"ib_read_bw", "-c UC", exitUsage, "", "UC has no READ"},
		{"ib_send_lat", "-q 2 host", exitUsage, "", "-q: ib_send_lat has no such option"},
		{"ib_write_bw", "--nonsense", exitUsage, "", "--nonsense: unknown option"},
		{"ib_write_bw", "-q 1025 host", exitUsage, "", "-q: 1025 out of range 1..1024"},
		{"ib_send_bw", "-c UD -s 8192 -m 1024 host", exitUsage, "", "8192"}, // UD above the path MTU: rdmabench's own check
	} {
		var out, errb bytes.Buffer
		code := runDropIn(perftest.Tools[tc.tool], strings.Fields(tc.args), &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.tool, tc.args, code, out.String(), errb.String(), tc.code, tc.out, tc.err)
		}
	}
	if _, ok := dropIn([]string{"/usr/bin/rdmabench", "run"}); ok {
		t.Error("rdmabench taken for a drop-in")
	}
}

// TestDropInExitCodes: the drop-in's usage errors exit 2, a perftest
// client refused for want of a key (its *auth.Error) exits 4.
func TestDropInExitCodes(t *testing.T) {
	if code := exitCode(fmt.Errorf("wrapped: %w", dropin.UsageError{Err: errors.New("-R with a key")})); code != exitUsage {
		t.Errorf("dropin.UsageError: exit %d, want %d", code, exitUsage)
	}
	if code := exitCode(&auth.Error{Msg: "the client is perftest"}); code != exitPeer {
		t.Errorf("*auth.Error: exit %d, want %d", code, exitPeer)
	}
}

// TestScriptsUseOneParser: the scripts read perftest's output with
// rdmabench's parser (bench/perftest, 'rdmabench import perftest'), none
// with a parser of its own, and make bench's comparison with perftest
// (internal/e2e/exp) reads it through internal/vsperftest.
func TestScriptsUseOneParser(t *testing.T) {
	own := regexp.MustCompile(`(awk|grep|sed|cut)[^\n]*(#bytes|t_typical\[|BW average\[)`)
	for _, c := range []struct{ file, uses string }{
		{"internal/e2e/dropin_test.go", "perftest.ParsePrinted"},
		{"scripts/hw-check.sh", `"$bin" import perftest --show "column:$2"`},
		{"internal/e2e/exp/bench_test.go", "vsperftest.Run("},
		{"internal/e2e/exp/bench_test.go", "perftest.ParsePrinted"},
		{"internal/vsperftest/analysis.go", "perftest.ParsePrinted"},
		{"internal/exptool/wirebw/wirebw.go", "perftest.ParsePrinted"},
		{"scripts/dropinagree/main.go", "perftest.ParsePrinted"},
		{"internal/e2e/exp/agree_test.go", "scripts/dropinagree (on the host)"},
	} {
		b, err := os.ReadFile("../../" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(c.uses)) {
			t.Errorf("%s does not use %q", c.file, c.uses)
		}
		if loc := own.FindIndex(b); loc != nil && strings.HasSuffix(c.file, ".sh") {
			t.Errorf("%s parses perftest's table itself: %q", c.file, b[loc[0]:min(loc[1]+20, len(b))])
		}
	}
	e2e, err := os.ReadFile("../../internal/e2e/dropin_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(e2e, []byte("func TestDropInLayout(")) {
		t.Error("internal/e2e has no TestDropInLayout (the drop-in against perftest in the bed)")
	}
}

// TestDropInDocsEveryFlag: docs/perftest.md has a row for every option the
// drop-in knows.
func TestDropInDocsEveryFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/perftest.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range perftest.Flags() {
		if !bytes.Contains(doc, []byte("| `"+f.Short+"`, `"+f.Long+"`")) && !bytes.Contains(doc, []byte("| `"+f.Long+"`")) {
			t.Errorf("docs/perftest.md has no row for %s %s", f.Short, f.Long)
		}
	}
}
