package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// cacheLinePath is where Linux gives the CPU's coherency line size, the
// cache line perftest rounds its stepped addresses to (relative to the
// sysfs root's parent, "/" on a live system).
const cacheLinePath = "sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size"

// readCacheLine is the CPU's cache line under root (cacheLinePath), bytes:
// DefaultCacheLine when the file is missing or does not hold a power of two
// in 16..4096 (64 on x86 and most arm64, 128 on POWER and Apple's arm64).
func readCacheLine(root string) int {
	b, err := os.ReadFile(filepath.Join(root, cacheLinePath))
	if err != nil {
		return DefaultCacheLine
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 16 || n > 4096 || n&(n-1) != 0 {
		return DefaultCacheLine
	}
	return n
}

// This machine's cache line: each side rounds the messages it steps through
// its cycle buffer up to its own (spec.Spec.AddrStep, recvStep).
func init() { spec.CacheLine = readCacheLine("/") }
