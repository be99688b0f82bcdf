package scripttest

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The host-side tests of scripts/hw-check.sh (no RDMA, no guest). With the
// real rdmabench on a host without RDMA: exit 3 and a clear message, the
// report still written. With stub rdmabench and perftest programs
// (stubs_test.go): which ports run and which are skipped, the flags each
// tool gets (-i, -x from rdmabench's GID, --rdma-cm and -R on iWARP's
// address), the alternating order, the medians and ratios, a failed run
// (retried once, then in failures.txt, exit 1), a client started before
// its server listened, rdmabench's perftest links taken for perftest; under
// busybox sh, dash and bash where installed. Also: its reading of real
// result files (through 'rdmabench report --tsv'), and that it has no JSON
// or perftest parser of its own. The real path (rxe, siw, real perftest)
// is the guest's hw-check stage.

// hwCheck is scripts/hw-check.sh.
func hwCheck(t *testing.T) string { return filepath.Join(repoRoot(t), "scripts/hw-check.sh") }

// hwLimit bounds one run of hw-check.sh (its own --timeout is 20 s a run).
const hwLimit = 5 * time.Minute

func TestHWCheckUsage(t *testing.T) {
	hostOnly(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"--reps 0", []string{"--reps", "0"}, 2, "--reps must be a positive whole number, got '0'"},
		{"--ops atomic", []string{"--ops", "send,atomic"}, 2, "'atomic' is not one of"},
		{"--bin missing", []string{"--bin", "/nonexistent/rdmabench"}, 3, "not an executable"},
	} {
		r := runCombined(t, time.Minute, repoRoot(t), nil, append([]string{"sh", hwCheck(t)}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stdout, c.says) {
			t.Errorf("hw-check.sh %s: exit %d (want %d), output (want %q):\n%s", c.name, r.code, c.code, c.says, r.stdout)
		}
	}
}

// TestHWCheckJget: its JSON reader on result files from real guest runs is
// rdmabench itself ('rdmabench report --tsv').
func TestHWCheckJget(t *testing.T) {
	hostOnly(t)
	root, bin := repoRoot(t), rdmabench(t)
	for _, c := range []struct{ file, fields, want string }{
		{"bench/fabric/testdata/roce.json", "p50 gid dev", "17903.5 1 rxe1"},
		{"bench/fabric/testdata/iwarp.json", "op mode size", "send lat 2"},
		{"bench/result/testdata/guest/cm.json", "mib mode", "84.01843615738025 bw"},
	} {
		args := append([]string{"sh", hwCheck(t), "--jget", bin, filepath.Join(root, c.file)}, strings.Fields(c.fields)...)
		r := run(t, time.Minute, root, nil, args...)
		if got := strings.TrimSuffix(r.stdout, "\n"); r.code != 0 || got != c.want {
			t.Errorf("--jget %s %s: exit %d, got %q, want %q; stderr:\n%s", c.file, c.fields, r.code, got, c.want, r.stderr)
		}
	}
}

// TestHWCheckNoParsers: no JSON reader and no perftest parser of its own:
// rdmabench reads its JSON (devices --tsv, report --tsv) and perftest's
// tables (import perftest).
func TestHWCheckNoParsers(t *testing.T) {
	hostOnly(t)
	src := readFile(t, hwCheck(t))
	for _, no := range []string{"jflat", "jnums", "#bytes", "t_typical["} {
		if strings.Contains(src, no) {
			t.Errorf("hw-check.sh has %q: a parser of its own", no)
		}
	}
	for _, has := range []string{"report --tsv", "devices --tsv", `import perftest --show "column:`} {
		if !strings.Contains(src, has) {
			t.Errorf("hw-check.sh lacks %q: rdmabench no longer reads for it", has)
		}
	}
}

// TestHWCheckNoRDMA: the real binary on this host, which has no RDMA: exit
// 3, clearly, and still a report.
func TestHWCheckNoRDMA(t *testing.T) {
	hostOnly(t)
	if ents, _ := os.ReadDir("/sys/class/infiniband"); len(ents) > 0 {
		t.Skipf("this host has RDMA devices (%s, ...): the case wants none", ents[0].Name())
	}
	dir := t.TempDir()
	r := run(t, hwLimit, repoRoot(t), nil, "sh", hwCheck(t), "--bin", rdmabench(t), "-o", dir)
	if r.code != 3 {
		t.Errorf("exit %d, want 3; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "error: nothing checked: no RDMA device: rdmabench: ") {
		t.Errorf("stderr lacks 'nothing checked: no RDMA device' and rdmabench's reason:\n%s", r.stderr)
	}
	if !matches(r.stdout, `^Report: `+regexp.QuoteMeta(dir)+`/rdmabench-hw-check-.*\.tar\.gz`) {
		t.Errorf("stdout does not say where the report is:\n%s", r.stdout)
	}
	tgz := reportTgz(t, dir)
	files := tarFiles(t, tgz)
	if !hasSuffixed(files, "/host.txt") {
		t.Errorf("the report %s has no host.txt: %v", tgz, names(files))
	}
	if s, ok := suffixed(files, "/summary.txt"); !ok || !strings.Contains(s, "nothing checked: no RDMA device") {
		t.Errorf("the report's summary.txt lacks 'nothing checked: no RDMA device' (found: %v):\n%s", ok, s)
	}
}

// stubs is a directory of stub tools: bin/rdmabench, pt/ib_{send,write,read}_{lat,bw},
// devices.json; the stubs log their command lines in log.
type stubs struct {
	t    *testing.T
	dir  string // $STUB_DIR
	out  string // where runs put their reports and outputs
	real string // the real rdmabench (REAL_RDMABENCH)
}

func newStubs(t *testing.T) *stubs {
	hostOnly(t)
	t.Parallel() // stub runs wait on the stubs' polling more than on the CPU
	s := &stubs{t: t, dir: t.TempDir(), out: t.TempDir(), real: rdmabench(t)}
	dev, err := os.ReadFile("testdata/hwcheck-devices.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "pt", "links"} {
		if err := os.Mkdir(filepath.Join(s.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range map[string]struct {
		body string
		mode os.FileMode
	}{
		"devices.json": {string(dev), 0o644}, "bin/rdmabench": {stubRdmabench, 0o755}, "pt/ib_stub": {stubPerftest, 0o755},
	} {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range []string{"send", "write", "read"} {
		for _, m := range []string{"lat", "bw"} {
			if err := os.Symlink("ib_stub", filepath.Join(s.dir, "pt", "ib_"+op+"_"+m)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// stubRun is one run of hw-check.sh with the stubs: its exit code, outputs,
// the stubs' log and the kept report directory.
type stubRun struct {
	name           string
	code           int
	stdout, stderr string
	log            string
	report         string // the report's directory (--keep)
	tgzsDir        string // where its .tar.gz went (-o)
}

// run runs hw-check.sh under shell (argv) with the stubs first on PATH
// (path: the stub directories to put there), fresh stub state, --keep and
// --timeout 20, and args.
func (s *stubs) run(name string, shell []string, path []string, args ...string) stubRun {
	s.t.Helper()
	for _, pat := range []string{"log", "count.*", "done.*", "refused"} {
		ms, _ := filepath.Glob(filepath.Join(s.dir, pat))
		for _, m := range ms {
			os.Remove(m)
		}
	}
	dir := filepath.Join(s.out, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	var p []string
	for _, d := range path {
		p = append(p, filepath.Join(s.dir, d))
	}
	env := []string{"STUB_DIR=" + s.dir, "REAL_RDMABENCH=" + s.real, "PATH=" + strings.Join(append(p, os.Getenv("PATH")), ":")}
	argv := append(append(append([]string(nil), shell...), hwCheck(s.t), "--bin", filepath.Join(s.dir, "bin/rdmabench"), "-o", dir, "--keep", "--timeout", "20"), args...)
	r := run(s.t, hwLimit, repoRoot(s.t), env, argv...)
	log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	sr := stubRun{name: name, code: r.code, stdout: r.stdout, stderr: r.stderr, log: string(log), tgzsDir: dir}
	if ms, _ := filepath.Glob(filepath.Join(dir, "rdmabench-hw-check-*")); len(ms) > 0 {
		for _, m := range ms {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				sr.report = m
				break
			}
		}
	}
	return sr
}

// row wants a summary row of r's stdout matching re ('  re *' as the whole line).
func (r stubRun) row(t *testing.T, re string) {
	t.Helper()
	if !matches(r.stdout, `^  `+re+` *$`) {
		var rows []string
		for _, l := range strings.Split(r.stdout, "\n") {
			if matches(l, `^  [a-z]`) {
				rows = append(rows, "     "+l)
			}
		}
		t.Errorf("%s: no summary row like %q in:\n%s", r.name, re, strings.Join(rows, "\n"))
	}
}

// has wants a match of re ((?m)) in what (r's stdout, log, ...).
func (r stubRun) has(t *testing.T, what, text, re string) {
	t.Helper()
	if !matches(text, re) {
		t.Errorf("%s: no match of %q in its %s:\n%s", r.name, re, what, text)
	}
}

// order is the tools of one test in the order of their runs: "rb" for
// rdmabench, "pt" for perftest's client.
func (r stubRun) order(dev, op, mode string) string {
	re := regexp.MustCompile(`^(rdmabench loopback -d ` + dev + ` .*--op ` + op + ` --mode ` + mode + ` |ib_` + op + `_` + mode + ` -d ` + dev + ` .* (127\.0\.0\.1|198\.51\.100\.7)$)`)
	var b strings.Builder
	for _, l := range strings.Split(r.log, "\n") {
		if re.MatchString(l) {
			if strings.HasPrefix(l, "rdmabench") {
				b.WriteString("rb ")
			} else {
				b.WriteString("pt ")
			}
		}
	}
	return b.String()
}

// shells are the shells hw-check.sh runs under here: busybox sh, dash
// where installed, and bash.
func shells() [][]string {
	var sh [][]string
	if _, err := exec.LookPath("busybox"); err == nil {
		sh = append(sh, []string{"busybox", "sh"})
	}
	if _, err := exec.LookPath("dash"); err == nil {
		sh = append(sh, []string{"dash"})
	}
	return append(sh, []string{"bash"})
}

// TestHWCheckStubs runs the whole fixture under the first shell.
func TestHWCheckStubs(t *testing.T) {
	s := newStubs(t)
	sh := shells()[0]
	t.Logf("the whole fixture under %s", strings.Join(sh, " "))
	r := s.run("full", sh, []string{"pt", "bin"}, "--ops", "write,read", "--modes", "lat,bw", "--lat-sizes", "2", "--bw-sizes", "65536",
		"--lat-iters", "1000", "--bw-iters", "5000")
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (one test failed); stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r.has(t, "stdout", r.stdout, `^Report: `+regexp.QuoteMeta(r.tgzsDir)+`/rdmabench-hw-check-.*\.tar\.gz`)

	// the report is one .tar.gz with summary, results and every run's JSON
	files := tarFiles(t, reportTgz(t, r.tgzsDir))
	for _, f := range []string{"/summary.txt", "/results.tsv", "/host.txt", "/devices.json"} {
		if !hasSuffixed(files, f) {
			t.Errorf("the report has no %s: %v", f, names(files))
		}
	}
	runs := 0
	for _, f := range names(files) {
		if matches(f, `runs/.*\.rb[0-9]\.json$`) {
			runs++
		}
	}
	if runs != 33 {
		t.Errorf("the report has %d rdmabench runs' JSON, want 33: %v", runs, names(files))
	}

	// down, initialising and address-less iWARP ports skipped, with the reason
	for _, l := range []string{"mlx5_0 port 1: PORT_DOWN (not ACTIVE): skipped", "mlx4_0 port 2: PORT_INIT (not ACTIVE): skipped",
		"irdma0 port 1: iWARP port without an IPv4 address on ens5: rdma_cm needs one; skipped"} {
		r.has(t, "stdout", r.stdout, `^  `+regexp.QuoteMeta(l))
	}
	if matches(r.log, `-d (mlx5_0|irdma0) |-d mlx4_0 -i 2`) {
		t.Errorf("a skipped port ran:\n%s", r.log)
	}
	// RoCE: perftest gets rdmabench's GID index (-x 3), over 127.0.0.1
	r.has(t, "log", r.log, `^ib_write_lat -d mlx5_1 -i 1 -s 2 -n 1000 -p [0-9]* -x 3 127\.0\.0\.1$`)
	r.has(t, "log", r.log, `^ib_read_bw -d mlx5_1 -i 1 -s 65536 -n 5000 -p [0-9]* -t 128 -Q 100 -x 3 127\.0\.0\.1$`)
	// InfiniBand: no -x; the same -i, size and count for both tools
	r.has(t, "log", r.log, `^ib_write_lat -d mlx4_0 -i 1 -s 2 -n 1000 -p [0-9]* 127\.0\.0\.1$`)
	r.has(t, "log", r.log, `^rdmabench loopback -d mlx4_0 -i 1 --op write --mode lat -s 2 -n 1000 --inline-size perftest --json `)
	// iWARP: rdmabench --rdma-cm, perftest -R on the port's IPv4 address
	r.has(t, "log", r.log, `^rdmabench loopback -d cxgb4_0 -i 1 --op write --mode bw -s 65536 -n 5000 --inline-size perftest -t 128 -Q 100 --rdma-cm --json `)
	r.has(t, "log", r.log, `^ib_write_bw -d cxgb4_0 -i 1 -s 65536 -n 5000 -p [0-9]* -t 128 -Q 100 -R 198\.51\.100\.7$`)
	// the runs alternate
	if got := r.order("mlx4_0", "write", "bw"); got != "rb pt pt rb rb pt " {
		t.Errorf("mlx4_0 write bw: runs in the order %q, want \"rb pt pt rb rb pt \"", got)
	}
	// medians and ratios (lat 1.60/2.00, bw 9100/10000; '!' 10 % worse)
	r.row(t, `mlx5_1 +1 write +lat +2 +1\.60 +2\.00 +0\.800`)
	r.row(t, `mlx5_1 +1 write +bw +65536 +9100\.00 +10000\.00 +0\.910`)
	r.row(t, `mlx5_1 +1 read +lat +2 +2\.60 +2\.00 +1\.300 !`)
	r.row(t, `mlx4_0 +1 read +bw +65536 +9100\.00 +10000\.00 +0\.910`)
	r.row(t, `cxgb4_0 +1 write +lat +2 +1\.60 +2\.00 +0\.800`)
	// the failed test: 'failed', run twice, its output in failures.txt
	r.row(t, `cxgb4_0 +1 read +bw +65536 +failed +10000\.00 +\(failed runs: rdmabench 3, perftest 0\)`)
	if n := countMatches(r.log, `^rdmabench loopback -d cxgb4_0 .*--op read --mode bw`); n != 6 {
		t.Errorf("the failed test ran %d times, want 6 (3 runs, each retried once)", n)
	}
	if r.report == "" {
		t.Fatalf("no kept report directory in %s", r.tgzsDir)
	}
	if f, err := os.ReadFile(filepath.Join(r.report, "failures.txt")); err != nil || !strings.Contains(string(f), "stub failure on purpose") {
		t.Errorf("failures.txt lacks the failed run's output (%v):\n%s", err, f)
	}
	r.has(t, "stdout", r.stdout, `failures: 3 run\(s\) failed twice`)
	// a client started before its server listened runs again
	again := false
	cmds, _ := filepath.Glob(filepath.Join(r.report, "runs/*/*.pt1.cmd"))
	for _, c := range cmds {
		if b, err := os.ReadFile(c); err == nil && strings.Contains(string(b), "client started 2 times") {
			again = again || strings.HasSuffix(c, "mlx5_1-p1/write-lat-2.pt1.cmd")
		}
	}
	if !again {
		t.Errorf("mlx5_1-p1/write-lat-2.pt1.cmd does not say 'client started 2 times' (the refused first client): %v", cmds)
	}
	// host and device information in the summary
	r.has(t, "stdout", r.stdout, `^rdmabench: rdmabench 9\.9\.9 \(stub\)`)
	r.has(t, "stdout", r.stdout, `^perftest: 6\.99`)
	r.has(t, "stdout", r.stdout, `^  mlx5_1 port 1: PORT_ACTIVE, RoCE \(Ethernet\), driver mlx5_core, firmware 28\.39\.1002, link 100\.0 Gbps 4X, MTU 4096, netdev ens1f1 198\.51\.100\.2`)
	r.has(t, "stdout", r.stdout, `^rdma-core \(rdmabench.s view\): 50\.0`)
	r.has(t, "stdout", r.stdout, `^  mlx5_1 port 1: lat: PCIe relax order ON, GID index 3, MTU 4096\[B\], inline 0\[B\], rdma_cm QPs OFF`)
}

// TestHWCheckStubShells runs a narrower fixture under the other shells.
func TestHWCheckStubShells(t *testing.T) {
	s := newStubs(t)
	sh := shells()[1:]
	if len(sh) == 0 {
		t.Skip("no second shell here (busybox, dash)")
	}
	for _, shell := range sh {
		name := strings.Join(shell, "-")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := s.run(name, shell, []string{"pt", "bin"}, "-d", "mlx5_1,cxgb4_0", "--ops", "write", "--modes", "lat,bw", "--lat-sizes", "2", "--bw-sizes", "4096", "-n", "100")
			if r.code != 0 {
				t.Errorf("exit %d, want 0; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			r.row(t, `mlx5_1 +1 write +lat +2 +1\.60 +2\.00 +0\.800`)
			r.row(t, `cxgb4_0 +1 write +bw +4096 +9100\.00 +10000\.00 +0\.910`)
			if strings.Contains(r.log, "-d mlx4_0") {
				t.Errorf("-d mlx5_1,cxgb4_0 ran mlx4_0:\n%s", r.log)
			}
			r.has(t, "stdout", r.stdout, `failures: none`)
		})
	}
}

// TestHWCheckExpect: --expect-bw and --expect-lat pass through to one
// 'rdmabench accept' over the checked devices, whose table goes into the
// summary and whose exit (11: a NIC failed) is the script's.
func TestHWCheckExpect(t *testing.T) {
	s := newStubs(t)
	r := s.run("expect", shells()[0], []string{"pt", "bin"}, "-d", "mlx5_1,mlx4_0", "--ops", "write", "--modes", "lat", "--lat-sizes", "2",
		"-n", "100", "--reps", "1", "--no-perftest", "--expect-bw", "90%", "--expect-lat", "p50=2.5us")
	if r.code != 11 {
		t.Errorf("exit %d, want 11 (accept: a NIC failed); stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r.has(t, "log", r.log, `^rdmabench accept -d mlx5_1,mlx4_0 --json .*/accept\.json --expect-bw 90% --expect-lat p50=2\.5us$`)
	r.has(t, "stdout", r.stdout, `^expectations \(rdmabench accept, exit 11; accept\.json in the report\):`)
	r.has(t, "stdout", r.stdout, `^  node: FAIL \(fail: mlx5_1\)`)
}

// TestHWCheckDropInLinks: rdmabench's own perftest links on PATH are not
// taken for perftest.
func TestHWCheckDropInLinks(t *testing.T) {
	s := newStubs(t)
	for _, m := range []string{"lat", "bw"} {
		if err := os.Symlink("../bin/rdmabench", filepath.Join(s.dir, "links", "ib_write_"+m)); err != nil {
			t.Fatal(err)
		}
	}
	r := s.run("links", []string{"sh"}, []string{"links"}, "-d", "mlx5_1", "--ops", "write", "--modes", "lat", "--lat-sizes", "2", "-n", "100")
	r.stdout += r.stderr // as 2>&1 had them
	if r.code != 0 {
		t.Errorf("exit %d, want 0; output:\n%s", r.code, r.stdout)
	}
	r.has(t, "output", r.stdout, `^perftest: not perftest: ib_write_lat on PATH \(`+regexp.QuoteMeta(filepath.Join(s.dir, "links/ib_write_lat"))+`\) is rdmabench.s drop-in link`)
	r.row(t, `mlx5_1 +1 write +lat +2 +1\.60`)
	if matches(r.log, `^ib_`) {
		t.Errorf("a perftest tool ran:\n%s", r.log)
	}
}

// reportTgz is the one .tar.gz in dir.
func reportTgz(t *testing.T, dir string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
	if len(ms) != 1 {
		t.Fatalf("want one .tar.gz report in %s, found %v", dir, ms)
	}
	return ms[0]
}

// tarFiles reads a .tar.gz: each entry's name and content.
func tarFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string]string{}
	tr := tar.NewReader(z)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		files[h.Name] = string(b)
	}
}

// suffixed is the content of the entry whose name ends in suffix.
func suffixed(files map[string]string, suffix string) (string, bool) {
	for n, c := range files {
		if strings.HasSuffix(n, suffix) {
			return c, true
		}
	}
	return "", false
}

func hasSuffixed(files map[string]string, suffix string) bool {
	_, ok := suffixed(files, suffix)
	return ok
}

// names are the entries' names, sorted.
func names(files map[string]string) []string {
	var ns []string
	for n := range files {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
