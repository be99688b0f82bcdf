//go:build experiment

package expkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// OutEnv names the directory the experiments write their files to (the
// Makefile sets /out, which the bed maps to build/<target>).
const OutEnv = "RDMABENCH_OUT"

// Out returns $RDMABENCH_OUT (created), or a temporary directory.
func Out(t testing.TB) string {
	t.Helper()
	d := os.Getenv(OutEnv)
	if d == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// Str returns $name, or def where it is unset or empty.
func Str(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Int returns $name as an integer in [lo, hi] (def where unset); it fails the
// test on anything else, naming the variable.
func Int(t testing.TB, name string, def, lo, hi int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		t.Fatalf("%s must be an integer in %d..%d, got %q", name, lo, hi, v)
	}
	return n
}

// Seconds returns $name (whole seconds, default def) as a duration.
func Seconds(t testing.TB, name string, def int) time.Duration {
	t.Helper()
	return time.Duration(Int(t, name, def, 1, 1<<20)) * time.Second
}

// Context is a context that ends after limit, or earlier at the test
// binary's own deadline (-test.timeout) less a few seconds for the report.
func Context(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	end := time.Now().Add(limit)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok && dl.Add(-5*time.Second).Before(end) {
			end = dl.Add(-5 * time.Second)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	t.Cleanup(cancel)
	return ctx
}

// WriteFile writes b to dir/name, failing the test on an error.
func WriteFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Tail returns the last n lines of the file at path ("" when unreadable).
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// Since formats the seconds since t0, as the old scripts printed them.
func Since(t0 time.Time) string { return fmt.Sprintf("%.0f s", time.Since(t0).Seconds()) }
