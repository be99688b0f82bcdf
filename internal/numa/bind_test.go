package numa

import (
	"errors"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestBindNode0 maps and populates a buffer under Bind to node 0, which
// every Linux machine has, and reads back the node of each page.
func TestBindNode0(t *testing.T) {
	nodes, err := Online()
	if err != nil || !slices.Contains(nodes, 0) {
		t.Skipf("node 0 not online (%v, %v)", nodes, err)
	}
	var mem []byte
	err = Bind(0, func() error {
		var err error
		mem, err = unix.Mmap(-1, 0, 4*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
		return err
	})
	if errors.Is(err, unix.ENOSYS) {
		t.Skipf("no NUMA support in this kernel: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for off := 0; off < len(mem); off += 4096 {
		n, err := NodeOf(uintptr(unsafe.Pointer(&mem[off])))
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("page at offset %d on node %d, want 0", off, n)
		}
	}
}

func TestBindErrors(t *testing.T) {
	want := errors.New("fn")
	if err := Bind(0, func() error { return want }); err != want && !errors.Is(err, unix.ENOSYS) {
		t.Errorf("Bind returned %v, want fn's error", err)
	}
	if err := Bind(-1, func() error { t.Error("fn ran"); return nil }); err == nil {
		t.Error("Bind(-1): no error")
	}
	ran := false
	err := Bind(maskWords*64-1, func() error { ran = true; return nil }) // no such node
	if err == nil || ran {
		t.Errorf("Bind to a missing node: %v, fn ran %v; want an error before fn", err, ran)
	}
}

func TestAffinity(t *testing.T) {
	cpus, err := Affinity()
	if err != nil || len(cpus) == 0 {
		t.Fatalf("Affinity() = %v, %v", cpus, err)
	}
}
