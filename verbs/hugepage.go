//go:build cgo && linux

package verbs

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// x86HugePageSize is the fallback huge page size, bytes, when the kernel's
// cannot be read: x86-64's 2 MiB.
const x86HugePageSize = 2 << 20

// HugePageSize is the kernel's default huge page size, bytes, which
// MAP_HUGETLB maps (AllocBuffer, pools with HugePages): Hugepagesize in
// /proc/meminfo, else the one size under /sys/kernel/mm/hugepages, else
// 2 MiB. It is not always 2 MiB: arm64 kernels with 64 KiB pages default to
// 512 MiB, and a kernel booted with default_hugepagesz=1G to 1 GiB. Read
// once per process.
func HugePageSize() int { return hugePageSize() }

var hugePageSize = sync.OnceValue(func() int {
	var meminfo io.Reader
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		meminfo = f
	}
	var sizes []string
	if ents, err := os.ReadDir("/sys/kernel/mm/hugepages"); err == nil {
		for _, e := range ents {
			sizes = append(sizes, e.Name())
		}
	}
	if n := hugePageSizeFrom(meminfo, sizes); n > 0 {
		return n
	}
	return x86HugePageSize
})

// hugePageSizeFrom is the default huge page size, bytes, from /proc/meminfo
// text (nil: not readable) or, without its Hugepagesize line, from the
// entries of /sys/kernel/mm/hugepages ("hugepages-2048kB") when there is
// exactly one; 0 when neither says.
func hugePageSizeFrom(meminfo io.Reader, sysfs []string) int {
	if meminfo != nil {
		s := bufio.NewScanner(meminfo)
		for s.Scan() {
			k, v, ok := strings.Cut(s.Text(), ":")
			if !ok || k != "Hugepagesize" {
				continue
			}
			if f := strings.Fields(v); len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.Atoi(f[0]); err == nil && n > 0 {
					return n << 10
				}
			}
		}
	}
	var found int
	for _, name := range sysfs {
		kb, ok := strings.CutPrefix(name, "hugepages-")
		if kb, ok = strings.CutSuffix(kb, "kB"); !ok {
			continue
		}
		n, err := strconv.Atoi(kb)
		if err != nil || n <= 0 {
			continue
		}
		if found != 0 {
			return 0 // several sizes: the default is not known from these
		}
		found = n << 10
	}
	return found
}
