package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
)

func TestParseAndClassify(t *testing.T) {
	md := "# t\n\n```sh\nrdmabench version\n```\n\n- item\n  ```text output\n  rdmabench 0.1.0\n  ```\n" +
		"```sh rdma exit=3\nrdmabench loopback\n```\n```\nbare\n```\n```sh rdma full\nx\n```\n```yaml norun\na: b\n```\n" +
		"```sh norun extra\nx\n```\n"
	bs, err := Parse("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line int
		kind Kind
		body string
		exit int
	}{
		{3, KindHost, "rdmabench version\n", 0},
		{8, KindOutput, "rdmabench 0.1.0\n", 0},
		{11, KindGuest, "rdmabench loopback\n", 3},
		{14, 0, "bare\n", 0},
		{17, KindGuest, "x\n", 0},
		{20, KindNoRun, "a: b\n", 0},
		{23, 0, "x\n", 0},
	}
	if len(bs) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(bs), len(want), bs)
	}
	for i, w := range want {
		b := bs[i]
		k, err := Classify(b)
		if b.Line != w.line || k != w.kind || b.Body != w.body || b.Exit() != w.exit || (w.kind == 0) != (err != nil) {
			t.Errorf("block %d: line %d kind %d body %q exit %d err %v; want %+v", i, b.Line, k, b.Body, b.Exit(), err, w)
		}
	}
	if _, err := Parse("x.md", "```sh\nopen\n"); err == nil {
		t.Error("an unclosed fence parsed")
	}
}

func TestCommands(t *testing.T) {
	for _, c := range []struct {
		body string
		want []Command
	}{
		{"rdmabench run hostA --auth-key-file k -n 10 # --not-a-flag\n", []Command{{"run", []string{"--auth-key-file", "-n"}}}},
		{"mpiexec -n 8 -ppn 1 \\\n    ./rdmabench mesh --net 10.0.0.0/8 --json=m.json\n", []Command{{"mesh", []string{"--net", "--json"}}}},
		{"go build -tags pmix -o rdmabench ./cmd/rdmabench\n", nil},
		{"rdmabench compare --format gobench a.json > new.txt && benchstat --x\n", []Command{{"compare", []string{"--format"}}}},
		{"rdmabench mr [-d DEV] [--sizes 4K] [--odp]\n", []Command{{"mr", []string{"-d", "--sizes", "--odp"}}}},
		{"echo '# not a comment' | rdmabench plot a.json -o x.svg\n", []Command{{"plot", []string{"-o"}}}},
	} {
		if got := Commands(c.body); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Commands(%q) = %+v, want %+v", c.body, got, c.want)
		}
	}
}

func TestHelpHasFlag(t *testing.T) {
	h := "  -n, --iters int   measured iterations\n      --op string  ops\n"
	for flag, want := range map[string]bool{"-n": true, "--iters": true, "--op": true, "--it": false, "--ops": false, "-x": false} {
		if got := HelpHasFlag(h, flag); got != want {
			t.Errorf("HelpHasFlag(%q) = %v, want %v", flag, got, want)
		}
	}
}

func TestMissingLines(t *testing.T) {
	out := " send        2         2000        12.14   n/a\nrdmabench: 4 regressions: a; b\n"
	for _, c := range []struct {
		sample string
		masked bool
		miss   []string
	}{
		{" send   2   200   1.5   7.25\n", true, nil},
		{" send   2   200   1.5   7.25\n", false, []string{" send   2   200   1.5   7.25"}},
		{"...\nrdmabench: 4 regressions: ...\n", false, nil},
		{"rdmabench: 5 regressions: ...\n", false, []string{"rdmabench: 5 regressions: ..."}},
		{" write 2 2000 12.14 n/a\n", true, []string{" write 2 2000 12.14 n/a"}},
	} {
		if got := MissingLines(c.sample, out, c.masked); !reflect.DeepEqual(got, c.miss) {
			t.Errorf("MissingLines(%q, masked %v) = %q, want %q", c.sample, c.masked, got, c.miss)
		}
	}
}

func TestForGuest(t *testing.T) {
	for in, want := range map[string]string{
		"rdmabench loopback --iters 2000 --op send":          "rdmabench loopback --iters 200 --op send",
		"rdmabench loopback -n 50":                           "rdmabench loopback -n 50",
		"rdmabench loopback --mode lat   # 10000 x":          "rdmabench loopback -n 200 --mode lat   # 10000 x",
		"rdmabench run 127.0.0.1 -D 2s":                      "rdmabench run 127.0.0.1 -D 2s",
		"rdmabench mr --iters 50 --op-iters 500":             "rdmabench mr --iters 50 --op-iters 500",
		"rdmabench compare --noise a.json --metrics p50,p99": "rdmabench compare --noise a.json --metrics p50,p99",
	} {
		if got := ForGuest(in); got != want {
			t.Errorf("ForGuest(%q) = %q, want %q", in, got, want)
		}
	}
}

// pendingDocs are linked from the docs but written elsewhere; none today (issue 14's
// install.md, ci.md, perftest.md and perftest-flags.md are merged).
var pendingDocs = map[string]bool{}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is GitHub's anchor for a heading.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLinks checks the relative links of README.md and docs/*.md: the file exists and,
// for FILE.md#anchor, the file has that heading.
func TestLinks(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	files = append(files, filepath.Join(repoRoot, "README.md"))
	anchors := func(f string) map[string]bool {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil
		}
		m := map[string]bool{}
		inFence := false
		for _, l := range strings.Split(string(b), "\n") {
			if fenceRE.MatchString(l) {
				inFence = !inFence
			}
			if h, ok := strings.CutPrefix(l, "#"); ok && !inFence {
				m[slug(strings.TrimLeft(h, "#"))] = true
			}
		}
		return m
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			tf := f
			if target != "" {
				tf = filepath.Join(filepath.Dir(f), target)
			}
			rel, _ := filepath.Rel(repoRoot, tf)
			if _, err := os.Stat(tf); err != nil {
				if !pendingDocs[rel] {
					t.Errorf("%s: link %s: %v", f, link, err)
				}
				continue
			}
			if anchor != "" && strings.HasSuffix(tf, ".md") && !anchors(tf)[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", f, link, rel, anchor)
			}
		}
	}
}

// TestRDMABlockKillsLeftovers runs an RDMA block's runner on the host: a block that
// starts a process in the background and fails before it stops it is tried twice, and
// nothing it started outlives a try (a left-behind server held the control port against
// the retry once, in CI).
func TestRDMABlockKillsLeftovers(t *testing.T) {
	dir := t.TempDir()
	block := "sleep 300 &\necho $! >>pids\nfalse\n"
	tries := runRDMABlock(t, "x.md:1", block, dir, dir, 0)
	if len(tries) != 2 || tries[1].Code == 0 || !tries[0].Killed || !tries[1].Killed {
		t.Fatalf("a failing block: %+v, want two tries, both failed, leftovers killed", tries)
	}
	pids, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(pids)) {
		// killed: gone or a zombie within a second, however loaded the host
		state := ""
		for end := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
			st, err := os.ReadFile("/proc/" + p + "/stat")
			f := strings.Fields(string(st))
			if err != nil || len(f) < 3 || f[2] == "Z" || f[2] == "X" {
				state = ""
				break
			}
			if state = f[2]; time.Now().After(end) {
				break
			}
		}
		if state != "" {
			syscall.Kill(mustAtoi(t, p), syscall.SIGKILL)
			t.Errorf("the block's background process %s outlived its try (state %s)", p, state)
		}
	}
	if got := runRDMABlock(t, "x.md:2", "echo ok\n", dir, dir, 0); len(got) != 1 || got[0].Code != 0 || got[0].Output != "ok\n" {
		t.Errorf("a passing block: %+v, want one try, exit 0, its output", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
