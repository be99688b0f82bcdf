package scripttest

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// ciAction runs scripts/ci-action.sh's steps from the repository root,
// with RDMABENCH_BIN, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY in a temporary
// directory.
type ciAction struct {
	t       *testing.T
	root    string
	bin     string
	tmp     string
	output  string // $GITHUB_OUTPUT
	summary string // $GITHUB_STEP_SUMMARY
}

func newCIAction(t *testing.T) *ciAction {
	hostOnly(t)
	tmp := t.TempDir()
	a := &ciAction{t: t, root: repoRoot(t), bin: rdmabench(t), tmp: tmp,
		output: filepath.Join(tmp, "out"), summary: filepath.Join(tmp, "summary")}
	a.reset()
	return a
}

// reset empties $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY.
func (a *ciAction) reset() {
	for _, f := range []string{a.output, a.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			a.t.Fatal(err)
		}
	}
}

// step runs 'scripts/ci-action.sh step' with env and wants exit code want
// and output (stdout and stderr) matching re ((?s): . spans lines).
func (a *ciAction) step(name string, want int, re string, step string, env ...string) {
	a.t.Helper()
	env = append([]string{"RDMABENCH_BIN=" + a.bin, "GITHUB_OUTPUT=" + a.output, "GITHUB_STEP_SUMMARY=" + a.summary}, env...)
	r := runCombined(a.t, 2*time.Minute, a.root, env, "scripts/ci-action.sh", step)
	if r.code != want || !regexp.MustCompile("(?s)"+re).MatchString(r.out()) {
		a.t.Errorf("%s: exit %d (want %d), output (want a match of %q):\n%s", name, r.code, want, re, r.out())
	}
}

// hasLine wants a line that is exactly line in file (a step output).
func (a *ciAction) hasLine(what, file, line string) {
	a.t.Helper()
	for _, l := range strings.Split(readFile(a.t, file), "\n") {
		if l == line {
			return
		}
	}
	a.t.Errorf("%s: no line %q in %s:\n%s", what, line, file, readFile(a.t, file))
}

func TestCIActionGate(t *testing.T) {
	a := newCIAction(t)
	fx := filepath.Join(a.root, "bench/compare/testdata")
	result := filepath.Join(a.tmp, "new.json")
	cp := func(name string) {
		b, err := os.ReadFile(filepath.Join(fx, name))
		if err == nil {
			err = os.WriteFile(result, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	base, res := "RDMABENCH_BASELINE="+filepath.Join(fx, "a.json"), "RDMABENCH_RESULT="+result
	cp("a.json")
	a.step("same numbers", 0, `no regressions`, "gate", base, res)
	a.reset()
	cp("b.json")
	a.step("regressed p99", 1, `REGRESSION write lat 2B: p99 .*\+15\.7%`, "gate", base, res, "RDMABENCH_MAX_REGRESS=p99=10%,bw=5%")
	if !strings.Contains(readFile(t, a.summary), "REGRESSION") {
		t.Errorf("the regression table is not in $GITHUB_STEP_SUMMARY:\n%s", readFile(t, a.summary))
	}
	a.step("within looser limits", 0, `no regressions`, "gate", base, res, "RDMABENCH_MAX_REGRESS=p99=50%,bw=50%")
	a.step("no baseline yet", 0, `no baseline .*none\.json: nothing to gate; commit`, "gate",
		"RDMABENCH_BASELINE="+filepath.Join(a.tmp, "none.json"), res)
	a.step("no result", 2, `no result file`, "gate", base, "RDMABENCH_RESULT="+filepath.Join(a.tmp, "missing.json"))
}

func TestCIActionInstall(t *testing.T) {
	a := newCIAction(t)
	a.step("none", 0, "bin="+regexp.QuoteMeta(a.bin), "install", "RDMABENCH_INSTALL=none")
	a.hasLine("install none: the step output", a.output, "bin="+a.bin)
	a.step("deb without a version", 2, `needs a version`, "install", "RDMABENCH_INSTALL=deb", "RDMABENCH_VERSION=")
	a.step("deb latest", 2, `not 'latest'`, "install", "RDMABENCH_INSTALL=deb", "RDMABENCH_VERSION=latest")
	a.step("unknown method", 2, `install wants deb, go or none, got: rpm`, "install", "RDMABENCH_INSTALL=rpm")
}

// TestCIActionRxe runs the rxe step with stubs in place of modprobe, rdma
// and apt-cache: this host's kernel is not touched.
func TestCIActionRxe(t *testing.T) {
	a := newCIAction(t)
	for _, p := range []string{"/sys/class/infiniband/rxe0", "/sys/module/rdma_rxe"} {
		if _, err := os.Stat(p); err == nil {
			t.Skipf("this host has rdma_rxe loaded (%s); the stubbed rxe cases assume it has not", p)
		}
	}
	stub := filepath.Join(a.tmp, "stub")
	writeStub := func(name, body string) {
		if err := os.MkdirAll(stub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stub, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeStub("modprobe", `echo "modprobe: FATAL: Module rdma_rxe not found" >&2; exit 1`)
	writeStub("apt-cache", `exit 100`)
	writeStub("rdma", `echo "rdma: stub: $*" >&2; exit 1`)
	path := "PATH=" + stub + ":" + os.Getenv("PATH")
	a.step("no rdma_rxe, auto", 0, `has no loadable rdma_rxe.*falling back to the VM bed.*bed=vm`, "rxe", path, "RDMABENCH_BED=auto")
	a.hasLine("rxe: the step output", a.output, "bed=vm")
	a.step("no rdma_rxe, bed=host", 3, `bed=host but kernel .* has no loadable rdma_rxe`, "rxe", path, "RDMABENCH_BED=host")
	writeStub("modprobe", `exit 0`)
	a.step("rdma link add fails", 0, `'rdma link add rxe0 type rxe netdev eth9' failed: falling back.*bed=vm`, "rxe",
		path, "RDMABENCH_BED=auto", "RDMABENCH_IFACE=eth9")
	a.step("bed=vm", 0, `bed=vm`, "rxe", "RDMABENCH_BED=vm")
	a.step("bad bed", 2, `bed wants auto, host or vm, got: cloud`, "rxe", "RDMABENCH_BED=cloud")
}

// TestActionYMLCallsScript: action.yml runs only the script's steps and
// sets only settings the script reads.
func TestActionYMLCallsScript(t *testing.T) {
	hostOnly(t)
	root := repoRoot(t)
	yml := readFile(t, filepath.Join(root, "action.yml"))
	script := readFile(t, filepath.Join(root, "scripts/ci-action.sh"))
	subs := map[string]bool{}
	for _, m := range regexp.MustCompile(`ci-action\.sh"? ([a-z]+)`).FindAllStringSubmatch(yml, -1) {
		subs[m[1]] = true
	}
	var got []string
	for s := range subs {
		got = append(got, s)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "gate install run rxe" {
		t.Errorf("action.yml runs the steps %q, want gate install run rxe", got)
	}
	seen := map[string]bool{}
	for _, v := range regexp.MustCompile(`RDMABENCH_[A-Z_]*`).FindAllString(yml, -1) {
		if seen[v] {
			continue
		}
		seen[v] = true
		if !regexp.MustCompile(`\$\{` + v + `\b|\$\{` + v + `:`).MatchString(script) {
			t.Errorf("action.yml sets %s, which scripts/ci-action.sh never reads", v)
		}
	}
}

// TestCIDocWorkflow: docs/ci.md's workflow is the example workflow file,
// less its comment header.
func TestCIDocWorkflow(t *testing.T) {
	hostOnly(t)
	root := repoRoot(t)
	// the lines of the ```yaml (or ```yaml norun) blocks, less the first and last fence
	var doc []string
	in := false
	for _, l := range strings.Split(readFile(t, filepath.Join(root, "docs/ci.md")), "\n") {
		if !in && (l == "```yaml" || l == "```yaml norun") {
			in = true
		}
		if in {
			doc = append(doc, l)
			if l == "```" {
				in = false
			}
		}
	}
	if len(doc) < 2 {
		t.Fatal("docs/ci.md has no ```yaml block")
	}
	doc = doc[1 : len(doc)-1]
	// the workflow less its comment lines and the empty lines before its first line
	var wf []string
	for _, l := range strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(root, ".github/workflows/rdmabench-softroce.yml")), "\n"), "\n") {
		if strings.HasPrefix(l, "#") || (len(wf) == 0 && l == "") {
			continue
		}
		wf = append(wf, l)
	}
	for i := 0; i < max(len(doc), len(wf)); i++ {
		var d, w string
		if i < len(doc) {
			d = doc[i]
		}
		if i < len(wf) {
			w = wf[i]
		}
		if i >= len(doc) || i >= len(wf) || d != w {
			t.Fatalf("docs/ci.md's workflow differs from .github/workflows/rdmabench-softroce.yml at its line %d: %q in the doc, %q in the file (%d and %d lines)",
				i+1, d, w, len(doc), len(wf))
		}
	}
}
