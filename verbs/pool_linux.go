//go:build cgo && linux

package verbs

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// ErrPoolExhausted: every buffer of a Pool is out. Get wraps it with the
// pool's size.
var ErrPoolExhausted = errors.New("pool exhausted")

// DefaultSlabSize is the slab size a Pool uses when PoolConfig.SlabSize is
// 0, bytes. A slab is never larger than the buffers it holds need.
const DefaultSlabSize = 64 << 20

// MaxPoolBuffers bounds PoolConfig.Count.
const MaxPoolBuffers = 1 << 20

// PoolAlign is the alignment of every pool buffer inside its slab, bytes:
// buffers start on a cache line and never share one.
const PoolAlign = 64

// PoolConfig describes a Pool.
type PoolConfig struct {
	// BufSize is the length of every buffer, bytes (at least 1).
	BufSize int
	// Count is the number of buffers, 1..MaxPoolBuffers: the bound on how
	// many can be out at once.
	Count int
	// SlabSize is the length of one registered slab, bytes; 0 means
	// DefaultSlabSize. A slab holds SlabSize / (BufSize rounded up to
	// PoolAlign) buffers, at least one; the last slab only what is left.
	SlabSize int
	// Access is given to every slab's MR, e.g. AccessLocalWrite|AccessRemoteWrite.
	// Grant only what the users of the pool need. With AccessOnDemand the
	// slabs are On-Demand Paging MRs: NewPool checks the device first.
	Access Access
	// ODPOps are the RC operations ODP memory must serve (checked with
	// CheckODP when Access has AccessOnDemand; 0: registration only).
	ODPOps ODPOps
	// HugePages maps the slabs from huge pages (MAP_HUGETLB, the kernel's
	// default size); each slab is rounded up to HugePageSize.
	HugePages bool
}

// stride is the distance between two buffers of a slab, bytes.
func (c PoolConfig) stride() int { return (c.BufSize + PoolAlign - 1) &^ (PoolAlign - 1) }

// perSlab is the number of buffers in a full slab.
func (c PoolConfig) perSlab() int {
	size := c.SlabSize
	if size == 0 {
		size = DefaultSlabSize
	}
	return min(c.Count, max(1, size/c.stride()))
}

// MappedBytes is what NewPool maps and registers for c, bytes: every
// slab's buffers, each slab rounded up to the page size (HugePageSize with
// HugePages). Budgets use it before anything is mapped; Pool.MappedBytes
// is the same figure of a pool that exists.
func (c PoolConfig) MappedBytes() int64 {
	if c.BufSize < 1 || c.Count < 1 {
		return 0
	}
	page := int64(os.Getpagesize())
	if c.HugePages {
		page = int64(HugePageSize())
	}
	stride, per := int64(c.stride()), c.perSlab()
	var total int64
	for first := 0; first < c.Count; first += per {
		n := int64(min(per, c.Count-first))
		total += (n*stride + page - 1) / page * page
	}
	return total
}

// check validates the configuration, naming the bad value and the limit.
func (c PoolConfig) check() error {
	switch {
	case c.BufSize < 1 || c.BufSize > 1<<40:
		return fmt.Errorf("verbs: pool buffer size %d bytes out of range 1..%d", c.BufSize, int64(1)<<40)
	case c.Count < 1 || c.Count > MaxPoolBuffers:
		return fmt.Errorf("verbs: pool of %d buffers out of range 1..%d", c.Count, MaxPoolBuffers)
	case c.SlabSize < 0:
		return fmt.Errorf("verbs: pool slab size %d bytes must not be negative (0: %d)", c.SlabSize, DefaultSlabSize)
	case c.Access&^(AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead|AccessRemoteAtomic|AccessOnDemand) != 0:
		return fmt.Errorf("verbs: pool access %#x has unknown flags", int(c.Access))
	case c.Access&(AccessRemoteWrite|AccessRemoteAtomic) != 0 && c.Access&AccessLocalWrite == 0:
		return fmt.Errorf("verbs: pool access %s needs LOCAL_WRITE with REMOTE_WRITE or REMOTE_ATOMIC", c.Access)
	case c.ODPOps != 0 && c.Access&AccessOnDemand == 0:
		return fmt.Errorf("verbs: pool ODP operations %s need AccessOnDemand", c.ODPOps)
	}
	return nil
}

// PoolBuf is one fixed-size buffer of a Pool: BufSize bytes of registered
// memory at Addr, usable with LKey locally and RKey remotely (as far as
// the pool's access allows). It belongs to whoever got it from Get until
// it goes back with Put; the pool hands the same *PoolBuf out again after
// that, so a returned buffer must not be used.
type PoolBuf struct {
	pool *Pool
	mr   *MR // the slab's MR
	mem  []byte
	addr uint64
	idx  int
	out  bool
}

// Addr is the buffer's virtual address.
func (b *PoolBuf) Addr() uint64 { return b.addr }

// Len is the buffer's length, bytes (PoolConfig.BufSize); 0 for a nil
// *PoolBuf or once its pool is closed.
func (b *PoolBuf) Len() uint64 {
	if b == nil {
		return 0
	}
	return uint64(len(b.mem))
}

// LKey is the local key of the slab's MR, valid for the buffer.
func (b *PoolBuf) LKey() uint32 { return b.mr.lkey }

// RKey is the remote key of the slab's MR (meaningful only with a remote
// access flag). It also grants access to the slab's other buffers.
func (b *PoolBuf) RKey() uint32 { return b.mr.rkey }

// MR is the slab's memory region: it covers this buffer and its
// neighbours. It stays registered until the pool is closed.
func (b *PoolBuf) MR() *MR { return b.mr }

// Bytes is the buffer's memory, outside the Go heap. The slice is invalid
// once the buffer is returned.
func (b *PoolBuf) Bytes() []byte { return b.mem }

// Pool returns the pool the buffer belongs to.
func (b *PoolBuf) Pool() *Pool { return b.pool }

// Put returns the buffer to its pool (Pool.Put).
func (b *PoolBuf) Put() error { return b.pool.Put(b) }

// Pool pre-registers memory once and hands out fixed-size buffers of it:
// Get and Put register nothing. The memory is a few large slabs, each an
// anonymous mmap (a Buffer, outside the Go heap) with one MR over it. The
// pool owns slabs and MRs until Close. Get and Put are safe for concurrent
// use.
type Pool struct {
	cfg   PoolConfig
	pd    *PD
	mu    sync.Mutex
	slabs []*Buffer
	mrs   []*MR
	bufs  []PoolBuf
	free  []int // indices into bufs; Get takes from the end
	nout  int
	shut  bool
}

// NewPool maps and registers every slab of cfg on p at once. With
// AccessOnDemand it first checks the device's ODP support and returns
// *NotSupportedError (e.g. "ODP not supported by rxe0") where there is none;
// with HugePages it fails when no huge pages are free. It checks
// RLIMIT_MEMLOCK like RegisterMR (*MemlockError).
func (p *PD) NewPool(cfg PoolConfig) (_ *Pool, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Access&AccessOnDemand != 0 {
		if err := p.ctx.CheckODP(cfg.ODPOps); err != nil {
			return nil, err
		}
	}
	pl := &Pool{cfg: cfg, pd: p, bufs: make([]PoolBuf, cfg.Count), free: make([]int, 0, cfg.Count)}
	defer func() {
		if err != nil {
			pl.release()
		}
	}()
	stride, per := cfg.stride(), cfg.perSlab()
	for first := 0; first < cfg.Count; first += per {
		n := min(per, cfg.Count-first)
		slab, err := AllocBuffer(n*stride, cfg.HugePages)
		if err != nil {
			return nil, fmt.Errorf("verbs: pool slab %d (%d buffers of %d bytes): %w", len(pl.slabs), n, cfg.BufSize, err)
		}
		pl.slabs = append(pl.slabs, slab)
		mr, err := p.RegisterMR(slab, 0, slab.Len(), cfg.Access)
		if err != nil {
			return nil, fmt.Errorf("verbs: pool slab %d (%d bytes): %w", len(pl.mrs), slab.Len(), err)
		}
		pl.mrs = append(pl.mrs, mr)
		for i := range n {
			off := i * stride
			pl.bufs[first+i] = PoolBuf{pool: pl, mr: mr, mem: slab.mem[off : off+cfg.BufSize : off+cfg.BufSize],
				addr: slab.Addr() + uint64(off), idx: first + i}
		}
	}
	for i := cfg.Count - 1; i >= 0; i-- { // Get hands out buffer 0 first
		pl.free = append(pl.free, i)
	}
	return pl, nil
}

// Config is the pool's configuration.
func (pl *Pool) Config() PoolConfig { return pl.cfg }

// PD is the protection domain of the pool's MRs: QPs using the buffers
// must belong to it.
func (pl *Pool) PD() *PD { return pl.pd }

// MappedBytes is the pool's mapped and registered memory, bytes: the sum of
// its slabs' lengths (0 once closed).
func (pl *Pool) MappedBytes() int64 {
	var n int64
	for _, s := range pl.slabs {
		n += int64(s.Len())
	}
	return n
}

// Slabs is the number of registered slabs (MRs).
func (pl *Pool) Slabs() int { return len(pl.mrs) }

// Out is the number of buffers currently out (got and not yet put back).
func (pl *Pool) Out() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.nout
}

// Get hands out a free buffer. It registers nothing and does not allocate.
// When all Count buffers are out it returns an error wrapping
// ErrPoolExhausted; after Close, ErrClosed. The caller owns the buffer until
// Put.
func (pl *Pool) Get() (*PoolBuf, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.shut {
		return nil, ErrClosed
	}
	n := len(pl.free)
	if n == 0 {
		return nil, fmt.Errorf("verbs: %w: all %d buffers of %d bytes are out", ErrPoolExhausted, pl.cfg.Count, pl.cfg.BufSize)
	}
	b := &pl.bufs[pl.free[n-1]]
	pl.free = pl.free[:n-1]
	b.out = true
	pl.nout++
	return b, nil
}

// Put returns b to the pool. It refuses a buffer of another pool and one
// that is not out (returned twice).
func (pl *Pool) Put(b *PoolBuf) error {
	if b == nil || b.pool != pl {
		return errors.New("verbs: put: the buffer does not belong to this pool")
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !b.out {
		return fmt.Errorf("verbs: put: buffer %d (0x%x) is not out: returned twice?", b.idx, b.addr)
	}
	b.out = false
	pl.free = append(pl.free, b.idx)
	pl.nout--
	return nil
}

// Close deregisters every slab's MR and unmaps the slabs. It refuses while
// buffers are out ("N buffers still out"). Idempotent; nil on a nil *Pool.
func (pl *Pool) Close() error {
	if pl == nil {
		return nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.shut {
		return nil
	}
	if pl.nout > 0 {
		return fmt.Errorf("verbs: close pool: %d buffers still out", pl.nout)
	}
	pl.shut = true
	return pl.release()
}

// release deregisters and unmaps what exists, MRs first.
func (pl *Pool) release() error {
	var errs []error
	for _, mr := range pl.mrs {
		errs = append(errs, mr.Close())
	}
	for _, s := range pl.slabs {
		errs = append(errs, s.Close())
	}
	pl.mrs, pl.slabs, pl.free = nil, nil, nil
	for i := range pl.bufs {
		pl.bufs[i].mem = nil
	}
	return errors.Join(errs...)
}

// Compile-time check: a PoolBuf is engine memory.
var _ Memory = (*PoolBuf)(nil)
