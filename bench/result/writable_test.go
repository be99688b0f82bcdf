package result

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckWritable: a new file is created and removed again, an existing
// one is left as it was, a directory and a missing directory are refused;
// stdout and nothing pass.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		ok   bool
	}{{"", true}, {"-", true}, {filepath.Join(dir, "new.json"), true}, {old, true}, {dir, false}, {filepath.Join(dir, "no", "x.json"), false}} {
		if err := CheckWritable(c.path); (err == nil) != c.ok {
			t.Errorf("CheckWritable(%q): %v", c.path, err)
		}
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != "kept" {
		t.Errorf("the existing file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.json")); !os.IsNotExist(err) {
		t.Errorf("the new file was left: %v", err)
	}
	if err := CheckPrefix(filepath.Join(dir, "h")); err != nil {
		t.Errorf("CheckPrefix: %v", err)
	}
	if err := CheckPrefix(filepath.Join(dir, "no", "h")); err == nil {
		t.Error("CheckPrefix in a missing directory passed")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "h-*")); len(m) > 0 {
		t.Errorf("CheckPrefix left %v", m)
	}
}
