package endpoint

import (
	"errors"
	"strings"
	"testing"
)

const meminfoText = `MemTotal:        2014252 kB
MemFree:         1700000 kB
MemAvailable:    1048576 kB
HugePages_Total:       4
HugePages_Free:        3
HugePages_Rsvd:        0
Hugepagesize:       2048 kB
`

func TestParseMeminfo(t *testing.T) {
	m := parseMeminfo(strings.NewReader(meminfoText))
	want := Meminfo{MemTotal: 2014252 << 10, MemAvailable: 1 << 30, HugePagesTotal: 4, HugePagesFree: 3, HugePageSize: 2 << 20}
	if m != want {
		t.Fatalf("parseMeminfo = %+v, want %+v", m, want)
	}
	if m := parseMeminfo(strings.NewReader("garbage\n")); m.MemAvailable != -1 {
		t.Fatalf("unknown MemAvailable = %d, want -1", m.MemAvailable)
	}
	if err := m.NoHugePages(); err != nil {
		t.Errorf("4 huge pages reserved, but: %v", err)
	}
	err := Meminfo{HugePageSize: 2 << 20}.NoHugePages()
	if !errors.Is(err, ErrNoHugePages) || !strings.Contains(err.Error(), "vm.nr_hugepages") || !strings.Contains(err.Error(), "HugePages_Total is 0") {
		t.Errorf("no huge pages: %v", err)
	}
}

// TestMeminfoHugePage: the huge page size in hints and counts is the one
// /proc/meminfo says (arm64 64K-page kernels: 512 MiB), never max'd up to
// x86's 2 MiB.
func TestMeminfoHugePage(t *testing.T) {
	for _, tt := range []struct {
		kb   string
		want int64
		hint string
	}{
		{"2048", 2 << 20, "N pages of 2 MiB"},
		{"524288", 512 << 20, "N pages of 512 MiB"},
		{"1048576", 1 << 30, "N pages of 1024 MiB"},
		{"64", 64 << 10, "N pages of 0.0625 MiB"},
	} {
		m := parseMeminfo(strings.NewReader("MemTotal: 8 kB\nHugePages_Total: 0\nHugepagesize: " + tt.kb + " kB\n"))
		if got := m.HugePage(); got != tt.want {
			t.Errorf("Hugepagesize %s kB: HugePage %d, want %d", tt.kb, got, tt.want)
		}
		if err := m.NoHugePages(); err == nil || !strings.Contains(err.Error(), tt.hint) {
			t.Errorf("Hugepagesize %s kB: %v, want %q", tt.kb, err, tt.hint)
		}
	}
}
