package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveToolCache: dcb's answer (configuration) is reused within
// toolCacheTTL; ethtool -S (counters) runs each time.
func TestLiveToolCache(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "calls")
	for _, name := range []string{"dcb", "ethtool"} {
		script := "#!/bin/sh\necho " + name + " >>" + count + "\necho ok\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	toolCache = answerCache{m: map[string]toolAnswer{}}
	t.Cleanup(func() { toolCache = answerCache{m: map[string]toolAnswer{}} })
	for range 3 {
		for _, argv := range [][]string{{"dcb", "pfc", "show", "dev", "eth0"}, {"ethtool", "-S", "eth0"}} {
			out, err := liveTool(argv[0], argv[1:]...)
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Fatalf("%v: %q, %v", argv, out, err)
			}
		}
	}
	if _, err := liveTool("dcb", "pfc", "show", "dev", "eth1"); err != nil { // another netdev: its own answer
		t.Fatal(err)
	}
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(b)), "dcb ethtool ethtool ethtool dcb"; strings.Join(got, " ") != want {
		t.Fatalf("tool runs %v, want %s", got, want)
	}
}
