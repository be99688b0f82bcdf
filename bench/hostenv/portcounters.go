package hostenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// counterDirs are a port's sysfs directories whose numeric files are
// counters, in the order their names take precedence.
var counterDirs = []string{"counters", "hw_counters"}

// notCounters are numeric files in counterDirs that are settings.
var notCounters = map[string]bool{
	"lifespan": true, // hw_counters/lifespan: how long the kernel caches the values, ms
}

// PortCounters reads every numeric file of port's counter directories
// (sysfs ports/N/counters/ and ports/N/hw_counters/) of device dev under
// root ("/" on a live system). Unreadable and non-numeric files are left
// out; a name counters/ has too is read from hw_counters/ as
// "hw_counters/NAME". It returns nil when no counter could be read.
func PortCounters(root, dev string, port int) map[string]uint64 {
	out := map[string]uint64{}
	base := filepath.Join(root, "sys/class/infiniband", dev, "ports", strconv.Itoa(port))
	for _, dir := range counterDirs {
		entries, err := os.ReadDir(filepath.Join(base, dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || notCounters[name] || !plainName(name) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(base, dir, name))
			if err != nil {
				continue // some drivers fail reads of counters they lack
			}
			v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				continue
			}
			key := name
			if _, dup := out[key]; dup && dir != counterDirs[0] {
				key = result.HWCounterPrefix + name
			}
			out[key] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// plainName reports whether a counter file name is one the result schema
// takes as a key: letters, digits, '_', '.' and '-'.
func plainName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return name != ""
}
