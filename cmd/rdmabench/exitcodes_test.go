package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/isolation"
)

// TestExitCodes runs rdmabench for a case of each exit code it reaches
// without an RDMA device, and checks the code, the time (every check is
// made before any test) and that the message names the value.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port) // nothing listens there once closed
	ln.Close()
	huge := "9223372036854775806-9223372036854775807"
	regressed, _ := withP99Regression(t)
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		code int
		args []string
		want string // in stderr
	}{
		{exitOK, []string{"version"}, ""},
		{exitOK, []string{"help"}, ""},
		{exitOK, []string{"--version"}, ""},
		{exitFail, []string{"compare", "--baseline", fixtureA, regressed, "--max-regress", "p99=10%"}, ""},
		{exitBlind, []string{"compare", "--baseline", fixtureRepeat, fixtureRepeatP99, "--max-regress", "p99=10%", "--require-power"}, "send lat 2B p99 detects +273.8% > 10%"},
		{exitInput, []string{"compare", filepath.Join(dir, "missing.json"), filepath.Join(dir, "missing2.json")}, "missing.json"},
		{exitInput, []string{"compare", "--baseline", fixtureA, garbage}, "garbage.json"},
		{exitInput, []string{"plot", garbage, "-o", filepath.Join(dir, "p.svg")}, "garbage.json"},
		{exitInput, []string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{exitUsage, []string{}, "Usage"},
		{exitUsage, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{exitUsage, []string{"runn"}, "Did you mean this?\n\trun"},
		{exitUsage, []string{"help", "runn"}, "Did you mean this?\n\trun"},
		{exitUsage, []string{"run", "127.0.0.1", "--iter", "5"}, "Did you mean this?\n\t--iters"},
		{exitUsage, []string{"loopback", "--szie", "64"}, "Did you mean this?\n\t--size"},
		{exitUsage, []string{"run", "127.0.0.1", "-D", "ten"}, "want seconds (10) or a duration"},
		{exitUsage, []string{"run"}, "server's host name"},
		{exitUsage, []string{"run", "127.0.0.1", "--no-such-flag"}, "no-such-flag"},
		{exitUsage, []string{"run", "127.0.0.1", "--rate", "NaN"}, "rate NaN ops/s out of range 1..1e+08"},
		{exitUsage, []string{"run", "127.0.0.1", "--rate", "Inf"}, "rate +Inf"},
		{exitUsage, []string{"run", "127.0.0.1", "--rate", "-Inf"}, "rate -Inf"},
		{exitUsage, []string{"run", "127.0.0.1", "--rate", "0.001"}, "rate 0.001 ops/s out of range 1.."},
		{exitUsage, []string{"run", "127.0.0.1", "--warmup", "-7"}, "--warmup -7"},
		{exitUsage, []string{"run", "127.0.0.1", "-x", "-1"}, "--gid-index -1"},
		{exitUsage, []string{"run", "127.0.0.1", "-x", "300"}, "--gid-index 300 out of range 0..255"},
		{exitUsage, []string{"run", "127.0.0.1", "-i", "0"}, "--ib-port 0 out of range 1..255"},
		{exitUsage, []string{"server", "-x", "-5"}, "--gid-index -5"},
		{exitUsage, []string{"server", "-p", "70000"}, "control port 70000"},
		{exitUsage, []string{"server", "--cpu", huge}, "CPU 9223372036854775807 out of range"},
		{exitUsage, []string{"server", "--max-memory", "-1"}, `memory size "-1"`},
		{exitUsage, []string{"server", "--max-memory", "99999999T"}, `memory size "99999999T"`},
		{exitUsage, []string{"server", "--max-qps", "-1"}, "--max-qps -1 out of range"},
		{exitUsage, []string{"server", "--max-startups", "-1"}, "--max-startups -1: must be 0 (automatic) or 1.."},
		{exitUsage, []string{"server", "--max-startups", "2000000000"}, "--max-startups 2000000000: must be 0 (automatic) or 1.."},
		{exitUsage, []string{"server", "--max-startups-per-addr", "0"}, "--max-startups-per-addr 0: must be at least 1"},
		{exitUsage, []string{"server", "--max-startups", "4", "--max-startups-per-addr", "5"}, "--max-startups-per-addr 5: must not exceed --max-startups 4"},
		{exitUsage, []string{"run", "127.0.0.1", "--numa-node", "4000"}, "--numa-node 4000: no such NUMA node (online: "},
		{exitUsage, []string{"loopback", "--numa-node", "-2"}, "--numa-node -2: want a node number >= 0"},
		{exitUsage, []string{"loopback", "--numa-node", "0", "--no-numa-bind"}, "--numa-node 0 and --no-numa-bind contradict"},
		{exitUsage, []string{"server", "--numa-node", "4000"}, "--numa-node 4000: no such NUMA node (online: "},
		{exitUsage, []string{"run", "127.0.0.1", "--cpu", huge}, "CPU 9223372036854775807 out of range"},
		{exitUsage, []string{"loopback", "--cpu", "0-" + huge[20:]}, "out of range"},
		{exitUsage, []string{"run", "127.0.0.1", "--json", filepath.Join(ro, "sub", "r.json")}, "--json " + filepath.Join(ro, "sub", "r.json")},
		{exitUsage, []string{"run", "127.0.0.1", "--hgrm", filepath.Join(dir, "nodir", "h")}, "--hgrm"},
		{exitUsage, []string{"run", "127.0.0.1", "--load-qps", "-3"}, "--load-qps -3"},
		{exitUsage, []string{"run", "127.0.0.1", "--load-qps", "65"}, "--load-qps 65 out of range 0..64"},
		{exitUsage, []string{"run", "127.0.0.1", "-p", "0"}, "--port 0 out of range 1..65535"},
		{exitUsage, []string{"run", "127.0.0.1", "--connect-timeout", "-1s"}, "--connect-timeout -1s"},
		{exitUsage, []string{"run", "127.0.0.1", "--interval", "-1s"}, "--interval -1s"},
		{exitUsage, []string{"run", "127.0.0.1", "--iters", "-1"}, "iterations -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--iters", "99999999999999999999"}, "99999999999999999999"},
		{exitUsage, []string{"run", "127.0.0.1", "--duration", "-5s"}, "duration -5s"},
		{exitUsage, []string{"run", "127.0.0.1", "--duration", "48h"}, "duration 48h0m0s"},
		{exitUsage, []string{"run", "127.0.0.1", "--warmup-time", "-1s"}, "warm-up time -1s"},
		{exitUsage, []string{"run", "127.0.0.1", "--tx-depth", "-1", "--mode", "bw"}, "tx depth -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--tx-depth", "40000", "--mode", "bw"}, "tx depth 40000 out of range 1..32768"},
		{exitUsage, []string{"run", "127.0.0.1", "--rx-depth", "-2"}, "rx depth -2"},
		{exitUsage, []string{"run", "127.0.0.1", "--cq-mod", "-1", "--mode", "bw"}, "CQ moderation -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--qps", "-1", "--mode", "bw"}, "QPs -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--qps", "5000", "--mode", "bw"}, "QPs 5000 out of range 1..1024"},
		{exitUsage, []string{"run", "127.0.0.1", "--threads", "-1", "--mode", "bw"}, "threads -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--post-list", "-1", "--mode", "bw"}, "post list -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--mtu", "-1"}, "MTU -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--sl", "16"}, "service level 16"},
		{exitUsage, []string{"run", "127.0.0.1", "--tclass", "-1"}, "traffic class -1"},
		{exitUsage, []string{"run", "127.0.0.1", "--inline-size", "-1"}, `--inline-size "-1"`},
		{exitUsage, []string{"run", "127.0.0.1", "--qp-timeout", "32"}, "QP timeout 32"},
		{exitUsage, []string{"run", "127.0.0.1", "--rnr-retry", "0"}, "--rnr-retry 0"},
		{exitUsage, []string{"run", "127.0.0.1", "--size", "2G"}, "exceeds the limit"},
		{exitUsage, []string{"run", "127.0.0.1", "--size", "-4"}, `size "-4"`},
		{exitUsage, []string{"run", "127.0.0.1", "--load-qps", "2", "--load-size", "0"}, "--load-size"},
		{exitUsage, []string{"loopback", "--max-memory", "0"}, `memory size "0"`},
		{exitUsage, []string{"mr", "-x", "-2"}, "--gid-index -2"},
		{exitUsage, []string{"mr", "--iters", "-1"}, "--iters -1"},
		{exitUsage, []string{"mr", "--json", filepath.Join(ro, "sub", "mr.json")}, "--json"},
		{exitEnv, []string{"loopback", "--op", "write", "--mode", "bw", "--size", "1G", "--max-memory", "64M"},
			"write bw 1 QP x 1 GiB needs 4.0 GiB of memory (4 GiB registered, 1.0 MiB other buffers) in this process (client and server); --max-memory is 64 MiB"},
		{exitEnv, []string{"run", "127.0.0.1", "--op", "write", "--mode", "bw", "--qps", "16", "--size", "256M", "--max-memory", "512M"},
			"write bw 16 QPs x 256 MiB needs 8.0 GiB of memory (8 GiB registered, 8.0 MiB other buffers) on the client; --max-memory is 512 MiB"},
		{exitPeer, []string{"run", "127.0.0.1", "-p", closed, "--transport", "tcp", "--connect-timeout", "200ms"}, "not reachable"},
		{exitPeer, []string{"doctor", "127.0.0.1", "-p", closed, "--connect-timeout", "200ms"}, "not reachable"},
		{exitUsage, []string{"doctor", "--ib-port", "0"}, "--ib-port 0 out of range"},
		{exitUsage, []string{"doctor", "-i", "2"}, "--ib-port 2 names a port of --ib-dev: add -d DEVICE"},
		{exitUsage, []string{"doctor", "a", "b"}, "at most one server"},
		{exitUsage, []string{"doctor", "--json", filepath.Join(ro, "sub", "d.json")}, "d.json"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			start := time.Now()
			code := run(c.args, &out, &errOut)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, errOut.String())
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v: checks come before any work", d)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // ro and garbage.json only: no probe files left behind
		t.Errorf("files left behind in %s: %v", dir, entries)
	}
}

// TestJSONWritableCheckLeavesNothing: checking a new --json path creates
// no file; an existing file is left as it was.
func TestJSONWritableCheckLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.json")
	if err := checkWritable("json", path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the check left %s behind (%v)", path, err)
	}
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, []byte("keep"), 0o644)
	if err := checkWritable("json", old); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "keep" {
		t.Errorf("the check changed an existing file to %q", b)
	}
	if err := checkWritable("json", dir); err == nil {
		t.Error("a directory passed as a --json file")
	}
}

// TestExitCodeTable keeps the exit code constants of main.go, the table
// in docs/exit-codes.md and the usage text in step.
func TestExitCodeTable(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]int{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "exit") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a literal", n.Name)
				}
				consts[n.Name], _ = strconv.Atoi(lit.Value)
			}
		}
	}
	doc, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| (\\d+) \\| `(exit\\w+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		rows[m[2]], _ = strconv.Atoi(m[1])
	}
	texts := map[string]string{"helpExitCodes": helpExitCodes, "rdmabench --help": helpText(t, "--help"),
		"rdmabench.1": manPage(t, "rdmabench.1")}
	if len(consts) < 6 {
		t.Fatalf("found %d exit constants in main.go", len(consts))
	}
	for name, code := range consts {
		if got, ok := rows[name]; !ok || got != code {
			t.Errorf("docs/exit-codes.md: %s is %d (present %v), main.go says %d", name, got, ok, code)
		}
		for where, text := range texts {
			if !regexp.MustCompile(fmt.Sprintf("(?m)^ +%d +\\S", code)).MatchString(text) {
				t.Errorf("%s: the exit code table lacks %d (%s)", where, code, name)
			}
		}
	}
	for name := range rows {
		if _, ok := consts[name]; !ok {
			t.Errorf("docs/exit-codes.md lists %s, which main.go does not define", name)
		}
	}
}

// helpText is the standard output of rdmabench args, which must exit 0
// with nothing on stderr.
func helpText(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != exitOK || errOut.Len() != 0 {
		t.Fatalf("rdmabench %q: exit %d, stderr:\n%s", args, code, errOut.String())
	}
	return out.String()
}

// manPage generates the man pages (rdmabench gen-man) and returns one,
// as man(1) would show it when groff is installed (else its source).
func manPage(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	helpText(t, "gen-man", dir)
	path := filepath.Join(dir, name)
	if groff, err := exec.LookPath("groff"); err == nil {
		out, err := exec.Command(groff, "-man", "-Tutf8", "-P", "-c", path).Output()
		if err != nil {
			t.Fatalf("groff %s: %v", name, err)
		}
		return string(out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestIsolationExitCodes: a crossed --max-inflation bound exits 1, one
// that could not be judged (and none crossed) 9.
func TestIsolationExitCodes(t *testing.T) {
	if c := exitCode(fmt.Errorf("x: %w", &isolation.CrossedError{})); c != exitFail {
		t.Errorf("crossed: exit %d, want %d", c, exitFail)
	}
	if c := exitCode(fmt.Errorf("x: %w", &isolation.UnjudgedError{})); c != exitBlind {
		t.Errorf("unjudged: exit %d, want %d", c, exitBlind)
	}
}
