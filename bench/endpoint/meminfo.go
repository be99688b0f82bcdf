package endpoint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/verbs"
)

// ErrNoHugePages: --hugepages was given but the kernel has no huge pages
// reserved.
var ErrNoHugePages = errors.New("no huge pages are reserved")

// Meminfo holds the /proc/meminfo values that bound buffer sizes, bytes.
type Meminfo struct {
	MemTotal       int64 // 0: unknown
	MemAvailable   int64 // -1: unknown
	HugePagesTotal int64 // pages
	HugePagesFree  int64 // pages
	HugePageSize   int64 // bytes; 0: unknown
}

// parseMeminfo reads /proc/meminfo text.
func parseMeminfo(r io.Reader) Meminfo {
	m := Meminfo{MemAvailable: -1}
	s := bufio.NewScanner(r)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		switch k {
		case "MemTotal":
			m.MemTotal = n
		case "MemAvailable":
			m.MemAvailable = n
		case "HugePages_Total":
			m.HugePagesTotal = n
		case "HugePages_Free":
			m.HugePagesFree = n
		case "Hugepagesize":
			m.HugePageSize = n
		}
	}
	return m
}

func ReadMeminfo() Meminfo {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return Meminfo{MemAvailable: -1}
	}
	defer f.Close()
	return parseMeminfo(f)
}

// NoHugePages explains a missing huge page reservation, or returns nil.
func (m Meminfo) NoHugePages() error {
	if m.HugePagesTotal > 0 {
		return nil
	}
	return fmt.Errorf("--hugepages: %w (HugePages_Total is 0 in /proc/meminfo): reserve some with "+
		"'sysctl vm.nr_hugepages=N' (N pages of %s), or run without --hugepages", ErrNoHugePages, FormatMiB(m.HugePage()))
}

// HugePage is the huge page size, bytes: Hugepagesize as read, else the
// kernel's default as verbs reads it (verbs.HugePageSize). Never an assumed
// 2 MiB where the kernel says otherwise.
func (m Meminfo) HugePage() int64 {
	if m.HugePageSize > 0 {
		return m.HugePageSize
	}
	return int64(verbs.HugePageSize())
}

// FormatMiB formats bytes as MiB with up to one decimal, e.g. "1536 MiB".
func FormatMiB(b int64) string {
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', -1, 64) + " MiB"
}
