package verbs

import (
	"io"
	"strings"
	"testing"
)

// TestHugePageSizeFrom: the huge page size comes from the kernel, not from
// x86's 2 MiB (arm64 64K-page kernels default to 512 MiB pages).
func TestHugePageSizeFrom(t *testing.T) {
	const meminfo = "MemTotal:       16307588 kB\nHugePages_Total:       0\nHugepagesize:       %s\nHugetlb:               0 kB\n"
	for _, tt := range []struct {
		name    string
		meminfo io.Reader
		sysfs   []string
		want    int
	}{
		{"x86-64", strings.NewReader(strings.Replace(meminfo, "%s", "2048 kB", 1)), []string{"hugepages-1048576kB", "hugepages-2048kB"}, 2 << 20},
		{"arm64 64K pages", strings.NewReader(strings.Replace(meminfo, "%s", "524288 kB", 1)), []string{"hugepages-16777216kB", "hugepages-2048kB", "hugepages-524288kB"}, 512 << 20},
		{"default_hugepagesz=1G", strings.NewReader(strings.Replace(meminfo, "%s", "1048576 kB", 1)), nil, 1 << 30},
		{"arm64 4K pages, 64K contiguous", strings.NewReader(strings.Replace(meminfo, "%s", "64 kB", 1)), nil, 64 << 10},
		{"no Hugepagesize line: one sysfs size", strings.NewReader("MemTotal: 1 kB\n"), []string{"hugepages-524288kB"}, 512 << 20},
		{"no meminfo: one sysfs size", nil, []string{"hugepages-2048kB"}, 2 << 20},
		{"no meminfo: several sizes", nil, []string{"hugepages-2048kB", "hugepages-1048576kB"}, 0},
		{"garbled", strings.NewReader("Hugepagesize: lots\n"), []string{"hugepages-xkB", "other"}, 0},
		{"nothing", nil, nil, 0},
	} {
		if got := hugePageSizeFrom(tt.meminfo, tt.sysfs); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
}
