package scripttest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// hostOnly skips where the test would not see a plain host: in a guest of
// the bed, which has RDMA devices and no GitHub runner's tools.
func hostOnly(t *testing.T) {
	t.Helper()
	if vmtest.InGuest() {
		t.Skip("host-only: the script tests need no RDMA and assume none (they run under the host's go test ./...)")
	}
}

// repoRoot is the repository's root (this package is scripts/scripttest).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// rdmabench is the binary the scripts run: $RDMABENCH_BIN, else one built
// once for this test binary (cgo, as make build builds it).
func rdmabench(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv(vmtest.BinEnv); p != "" {
			binPath, binErr = filepath.Abs(p)
			return
		}
		dir, err := os.MkdirTemp("", "scripttest-bin-")
		if err != nil {
			binErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		binPath = filepath.Join(dir, "rdmabench")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binPath, "./cmd/rdmabench")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = errors.New("go build ./cmd/rdmabench: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("the rdmabench binary (%s, or a fresh build): %v", vmtest.BinEnv, binErr)
	}
	if st, err := os.Stat(binPath); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("%s: not an executable file (%v): make build", binPath, err)
	}
	return binPath
}

// result is one run of a script.
type result struct {
	code           int // exit status; -1: killed at its deadline or did not start
	stdout, stderr string
}

// out is stdout and stderr together (stderr after stdout).
func (r result) out() string { return r.stdout + r.stderr }

// environ is this process's environment without the settings the scripts
// read (RDMABENCH_*, GITHUB_*, CI_ACTION_*), plus env (K=V; a later one wins).
func environ(env ...string) []string {
	var e []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "RDMABENCH_") || strings.HasPrefix(kv, "GITHUB_") || strings.HasPrefix(kv, "CI_ACTION_") {
			continue
		}
		e = append(e, kv)
	}
	return append(e, env...)
}

// run runs argv in dir with env (environ's), for at most limit, with its
// stdout and stderr apart.
func run(t *testing.T, limit time.Duration, dir string, env []string, argv ...string) result {
	t.Helper()
	return runOut(t, false, limit, dir, env, argv...)
}

// runCombined is run with stderr and stdout in one stream, in the order
// written (result.stdout; as $(cmd 2>&1) has them).
func runCombined(t *testing.T, limit time.Duration, dir string, env []string, argv ...string) result {
	t.Helper()
	return runOut(t, true, limit, dir, env, argv...)
}

func runOut(t *testing.T, combined bool, limit time.Duration, dir string, env []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, environ(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if combined {
		cmd.Stderr = cmd.Stdout // one pipe: the order kept
	}
	cmd.WaitDelay = 5 * time.Second // a stub left holding the pipes does not hang the test
	err := cmd.Run()
	r := result{code: 0, stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Errorf("%s: still running after %v; output:\n%s", strings.Join(argv, " "), limit, r.out())
		r.code = -1
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Errorf("%s: %v", strings.Join(argv, " "), err)
		r.code = -1
	}
	return r
}

// matches reports whether s has a match of the regular expression re
// ((?m): ^ and $ at lines).
func matches(s, re string) bool { return regexp.MustCompile("(?m)" + re).MatchString(s) }

// countMatches is the number of lines of s that match re.
func countMatches(s, re string) int {
	return len(regexp.MustCompile("(?m)"+re).FindAllStringIndex(s, -1))
}

// readFile is path's content; a missing file fails the test.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
