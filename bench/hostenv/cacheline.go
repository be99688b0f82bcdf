package hostenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// CacheLinePath is where Linux gives the CPU's coherency line size, the
// cache line perftest rounds its stepped addresses to (relative to the
// sysfs root's parent, "/" on a live system).
const CacheLinePath = "sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size"

// CacheLine is the CPU's cache line under root (CacheLinePath), bytes:
// spec.DefaultCacheLine when the file is missing or does not hold a power
// of two in 16..4096 (64 on x86 and most arm64, 128 on POWER and Apple's
// arm64).
func CacheLine(root string) int {
	b, err := os.ReadFile(filepath.Join(root, CacheLinePath))
	if err != nil {
		return spec.DefaultCacheLine
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 16 || n > 4096 || n&(n-1) != 0 {
		return spec.DefaultCacheLine
	}
	return n
}
