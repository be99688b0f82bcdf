package hostenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestReadCacheLine: the cache line comes from a (fake) sysfs tree, with
// 64 B for a file that is missing or holds no plausible line size.
func TestReadCacheLine(t *testing.T) {
	for _, c := range []struct {
		name    string
		content string // "": no file
		want    int
	}{
		{"x86", "64\n", 64},
		{"POWER", "128\n", 128},
		{"no newline", "256", 256},
		{"missing", "", spec.DefaultCacheLine},
		{"zero", "0\n", spec.DefaultCacheLine},
		{"garbage", "sixty-four\n", spec.DefaultCacheLine},
		{"not a power of two", "96\n", spec.DefaultCacheLine},
		{"too small", "8\n", spec.DefaultCacheLine},
		{"too large", "8192\n", spec.DefaultCacheLine},
	} {
		root := t.TempDir()
		if c.content != "" {
			p := filepath.Join(root, CacheLinePath)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := CacheLine(root); got != c.want {
			t.Errorf("%s: CacheLine over %q = %d, want %d", c.name, c.content, got, c.want)
		}
	}
}
