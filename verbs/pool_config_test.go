package verbs

import (
	"strings"
	"testing"
)

// TestPoolConfigLayout: how many buffers a slab holds, and the refusals,
// without a device.
func TestPoolConfigLayout(t *testing.T) {
	for _, tt := range []struct {
		name            string
		cfg             PoolConfig
		stride, perSlab int
		err             string
	}{
		{"page buffers, default slab", PoolConfig{BufSize: 8192, Count: 3}, 8192, 3, ""},
		{"rounded to the alignment", PoolConfig{BufSize: 65, Count: 100}, 128, 100, ""},
		{"slab smaller than a buffer", PoolConfig{BufSize: 1 << 20, Count: 4, SlabSize: 4096}, 1 << 20, 1, ""},
		{"slabs of three", PoolConfig{BufSize: 4096, Count: 10, SlabSize: 3*4096 + 100}, 4096, 3, ""},
		{"default slab bound", PoolConfig{BufSize: 1 << 20, Count: 1000}, 1 << 20, DefaultSlabSize >> 20, ""},
		{"no buffers", PoolConfig{BufSize: 64}, 0, 0, "pool of 0 buffers out of range 1..1048576"},
		{"empty buffers", PoolConfig{Count: 2}, 0, 0, "pool buffer size 0 bytes out of range"},
		{"atomic without local write", PoolConfig{BufSize: 8, Count: 1, Access: AccessRemoteAtomic}, 0, 0, "needs LOCAL_WRITE"},
		{"unknown access", PoolConfig{BufSize: 8, Count: 1, Access: 1 << 20}, 0, 0, "unknown flags"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.check()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("check() = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.cfg.stride(); got != tt.stride {
				t.Errorf("stride %d, want %d", got, tt.stride)
			}
			if got := tt.cfg.perSlab(); got != tt.perSlab {
				t.Errorf("%d buffers per slab, want %d", got, tt.perSlab)
			}
		})
	}
}

// TestPoolConfigMappedBytes: the bytes a pool maps, slab by slab, rounded
// to the page (or huge page), without a device.
func TestPoolConfigMappedBytes(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  PoolConfig
		want int64
	}{
		{"one buffer of two pages", PoolConfig{BufSize: 8192, Count: 1}, 8192},
		{"rounded to a page", PoolConfig{BufSize: 65, Count: 1}, 4096},
		{"slabs of three", PoolConfig{BufSize: 4096, Count: 10, SlabSize: 3*4096 + 100}, 10 * 4096},
		{"huge pages per slab", PoolConfig{BufSize: 4096, Count: 10, SlabSize: 3 * 4096, HugePages: true}, 4 * int64(HugePageSize())},
		{"16 x 512 MiB", PoolConfig{BufSize: 512 << 20, Count: 16}, 8 << 30},
		{"empty", PoolConfig{}, 0},
	} {
		if got := tt.cfg.MappedBytes(); got != tt.want {
			t.Errorf("%s: MappedBytes = %d, want %d", tt.name, got, tt.want)
		}
	}
}
