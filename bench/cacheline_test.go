package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
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
		{"missing", "", DefaultCacheLine},
		{"zero", "0\n", DefaultCacheLine},
		{"garbage", "sixty-four\n", DefaultCacheLine},
		{"not a power of two", "96\n", DefaultCacheLine},
		{"too small", "8\n", DefaultCacheLine},
		{"too large", "8192\n", DefaultCacheLine},
	} {
		root := t.TempDir()
		if c.content != "" {
			p := filepath.Join(root, cacheLinePath)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := readCacheLine(root); got != c.want {
			t.Errorf("%s: readCacheLine over %q = %d, want %d", c.name, c.content, got, c.want)
		}
	}
}

// TestAddrStepCacheLine: the step is the message rounded up to this
// machine's cache line, not a fixed 64 B.
func TestAddrStepCacheLine(t *testing.T) {
	defer func(old int) { spec.CacheLine = old }(spec.CacheLine)
	for _, c := range []struct {
		line, size, want int
	}{
		{64, 65, 128}, {64, 130, 192}, {128, 65, 128}, {128, 130, 256}, {128, 8, 128}, {256, 300, 512},
	} {
		spec.CacheLine = c.line
		s := Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: c.size, AddrCycle: 4096}
		if step, _ := s.AddrStep(); step != c.want {
			t.Errorf("cache line %d, %d B: step %d, want %d", c.line, c.size, step, c.want)
		}
	}
}
