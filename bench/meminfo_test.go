package bench

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
