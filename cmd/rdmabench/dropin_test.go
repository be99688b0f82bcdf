package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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

// TestDropInSpecs: perftest's defaults and counts become rdmabench's tests.
func TestDropInSpecs(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		n          int
		check      func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool
	}{
		{"ib_send_lat", "h", 1, func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool {
			return op == "send" && mode == "lat" && size == 2 && iters == 1000
		}},
		{"ib_write_bw", "-q 4 -n 100 h", 1, func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool {
			return op == "write" && mode == "bw" && size == 65536 && iters == 400 && tx == 100 && cq == 1 && qps == 4
		}},
		{"ib_atomic_bw", "-A CMP_AND_SWAP -D 3 h", 1, func(op, mode string, size int, iters int64, tx, cq, qps int, d time.Duration) bool {
			return op == "cmp_swap" && size == 8 && d == 3*time.Second && iters == 0 && tx == 128 && cq == 100
		}},
		{"ib_read_lat", "-a h", 23, nil},
	} {
		o, err := perftest.Parse(perftest.Tools[tc.tool], strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		specs, err := dropInSpecs(o)
		if err != nil || len(specs) != tc.n {
			t.Fatalf("%s %s: %d specs, %v", tc.tool, tc.args, len(specs), err)
		}
		s := specs[0]
		if tc.check != nil && !tc.check(s.Op, s.Mode, s.Size, s.Iters, s.TxDepth, s.CQMod, s.NumQPs(), s.Duration) {
			t.Errorf("%s %s: %+v", tc.tool, tc.args, s)
		}
	}
}

// TestScriptsUseOneParser: the scripts read perftest's output with
// rdmabench's parser (bench/perftest, 'rdmabench import perftest'), none
// with a parser of its own, and bench-vs-perftest.sh reads JSON only
// through Go (scripts/vsperftest).
func TestScriptsUseOneParser(t *testing.T) {
	own := regexp.MustCompile(`(awk|grep|sed|cut)[^\n]*(#bytes|t_typical\[|BW average\[)`)
	for _, c := range []struct{ file, uses string }{
		{"scripts/dropin-guest.sh", "rdmabench import perftest \"$@\""},
		{"scripts/hw-check.sh", `"$bin" import perftest --show "column:$2"`},
		{"scripts/bench-vs-perftest.sh", "go build -o \"$work/vsperftest\" ./scripts/vsperftest"},
		{"scripts/vsperftest/main.go", "perftest.ParsePrinted"},
		{"internal/exptool/wirebw/wirebw.go", "perftest.ParsePrinted"},
		{"scripts/dropinagree/main.go", "perftest.ParsePrinted"},
		{"scripts/dropin-perftest-agree.sh", "scripts/dropinagree (on the host) parses the tables"},
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
	bvp, err := os.ReadFile("../../scripts/bench-vs-perftest.sh")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`awk[^\n]*json|flatten|jget`).Match(bvp) {
		t.Error("scripts/bench-vs-perftest.sh reads JSON in awk")
	}
	gt, err := os.ReadFile("../../scripts/guest-test.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(gt, []byte("dropin-guest.sh")) {
		t.Error("scripts/guest-test.sh does not run scripts/dropin-guest.sh")
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
