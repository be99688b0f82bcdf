package e2e

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// RepoEnv names the repository's top directory, where the tests look for
// scripts/ when the package directory is not inside it (a bed that copies
// the test binary elsewhere).
const RepoEnv = "RDMABENCH_REPO"

// repoFile finds rel (slash-separated) in the repository: from the package
// directory (go test runs the test binary there), else under $RDMABENCH_REPO.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	tried := []string{filepath.Join("..", "..", filepath.FromSlash(rel))}
	if r := os.Getenv(RepoEnv); r != "" {
		tried = append(tried, filepath.Join(r, filepath.FromSlash(rel)))
	}
	for _, p := range tried {
		if _, err := os.Stat(p); err == nil {
			abs, err := filepath.Abs(p)
			if err != nil {
				t.Fatal(err)
			}
			return abs
		}
	}
	t.Fatalf("%s not found (tried %v; set %s to the repository's top directory)", rel, tried, RepoEnv)
	return ""
}

// TestHWCheck: scripts/hw-check.sh, which stays shell (users run it), on
// every ACTIVE port of the bed (rxe0, rxe1, siw1): rdmabench beside
// perftest, one report with every run's JSON, output and command.
func TestHWCheck(t *testing.T) {
	bin(t) // RDMABENCH_BIN is the binary hw-check.sh runs
	script := repoFile(t, "scripts/hw-check.sh")
	dir := t.TempDir()
	o := runEnv(t, 8*time.Minute, nil, "sh", script, "-o", dir, "--keep", "--ops", "write", "--modes", "lat", "--lat-sizes", "2",
		"-n", "100", "--reps", "1", "--timeout", "60", "--tcp-port", "18900") // perftest's pairs from 18900 on
	if o.Code != 0 {
		t.Fatalf("hw-check: %s", o)
	}
	t.Logf("hw-check's results:\n%s", lines(o.Stdout, func(l string) bool { return strings.HasPrefix(l, "  ") }))
	m := regexp.MustCompile(`(?m)^Report: (.*)\.tar\.gz \(`).FindStringSubmatch(o.Stdout)
	if m == nil {
		t.Fatalf("hw-check: no Report line: %s", o)
	}
	report := m[1]
	list := tarList(t, report+".tar.gz")
	for _, d := range []string{"rxe0", "rxe1", "siw1"} {
		row := regexp.MustCompile(`(?m)^  ` + d + ` +1 write +lat +2 +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{3}`)
		if !row.MatchString(o.Stdout) {
			t.Errorf("hw-check: no %s result with its perftest ratio: %s", d, o)
		}
		for _, f := range []string{"/runs/" + d + "-p1/write-lat-2.rb1.json", "/runs/" + d + "-p1/write-lat-2.pt1.txt"} {
			if !slicesHasSuffix(list, f) {
				t.Errorf("hw-check: the report has no %s (it has %d files)", f, len(list))
			}
		}
		validateJSON(t, filepath.Join(report, "runs", d+"-p1", "write-lat-2.rb1.json"))
	}
	for f, want := range map[string]string{
		"runs/rxe0-p1/write-lat-2.pt1.cmd": "-x 1 127.0.0.1 (client)",
		"runs/siw1-p1/write-lat-2.pt1.cmd": "-R 203.0.113.1 (client)",
		"runs/siw1-p1/write-lat-2.rb1.cmd": "--rdma-cm",
	} {
		b, err := os.ReadFile(filepath.Join(report, f))
		if err != nil {
			t.Errorf("hw-check: %v", err)
			continue
		}
		wantOutput(t, "hw-check's "+f, string(b), want)
	}
	if !regexp.MustCompile(`(?m)^failures: none`).MatchString(o.Stdout) {
		t.Errorf("hw-check: want 'failures: none': %s", o)
	}
}

// tarList is the names in a .tar.gz.
func tarList(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("hw-check: no report: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	tr := tar.NewReader(z)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names = append(names, h.Name)
	}
	return names
}

func slicesHasSuffix(list []string, suffix string) bool {
	for _, s := range list {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}
