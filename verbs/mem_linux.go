package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PD is a protection domain (struct ibv_pd).
type PD struct {
	mu     sync.Mutex
	ctx    *Context
	pd     *C.struct_ibv_pd
	nopen  int
	closed bool
}

// AllocPD calls ibv_alloc_pd.
func (c *Context) AllocPD() (*PD, error) {
	ctx, err := c.acquire()
	if err != nil {
		return nil, err
	}
	pd, err := C.ibv_alloc_pd(ctx)
	if pd == nil {
		c.release()
		return nil, &Error{Op: "ibv_alloc_pd", Detail: c.name, Err: err}
	}
	return &PD{ctx: c, pd: pd}, nil
}

// Context returns the device the PD belongs to.
func (p *PD) Context() *Context { return p.ctx }

func (p *PD) acquire() (*C.struct_ibv_pd, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	p.nopen++
	return p.pd, nil
}

func (p *PD) release() {
	p.mu.Lock()
	p.nopen--
	p.mu.Unlock()
}

// Close deallocates the PD; it fails while MRs or QPs of the PD are open.
// Close is idempotent; nil on a nil *PD.
func (p *PD) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if p.nopen > 0 {
		return fmt.Errorf("verbs: close pd: %d objects still open", p.nopen)
	}
	p.closed = true
	defer p.ctx.release()
	if rc := C.ibv_dealloc_pd(p.pd); rc != 0 {
		return &Error{Op: "ibv_dealloc_pd", Err: syscall.Errno(rc)}
	}
	return nil
}

// Buffer is page-aligned memory from an anonymous mmap, outside the Go heap,
// for use as a memory region. Its contents start zeroed.
type Buffer struct {
	mem    []byte
	huge   bool
	closed bool
}

// AllocBuffer maps size bytes (rounded up to the page size, or to the
// kernel's huge page size with huge pages: HugePageSize) with MAP_POPULATE. With huge=true it uses MAP_HUGETLB and fails
// with a hint when no huge pages are reserved.
func AllocBuffer(size int, huge bool) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("verbs: buffer size %d must be positive", size)
	}
	page := os.Getpagesize()
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_POPULATE
	if huge {
		page = HugePageSize()
		flags |= unix.MAP_HUGETLB
	}
	n := (size + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		e := &Error{Op: "mmap", Detail: fmt.Sprintf("%d bytes", n), Err: err}
		if huge {
			e.Detail += "; huge pages requested: reserve some with 'sysctl vm.nr_hugepages=N'"
		}
		return nil, e
	}
	return &Buffer{mem: mem, huge: huge}, nil
}

// Bytes is the buffer's memory. The slice is invalid after Close.
func (b *Buffer) Bytes() []byte { return b.mem }

// Len is the mapped length, bytes.
func (b *Buffer) Len() int { return len(b.mem) }

// Addr is the buffer's virtual address.
func (b *Buffer) Addr() uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.mem)))) }

// Close unmaps the buffer. Deregister every MR over it first. Idempotent;
// nil on a nil *Buffer.
func (b *Buffer) Close() error {
	if b == nil || b.closed {
		return nil
	}
	b.closed = true
	err := unix.Munmap(b.mem)
	b.mem = nil
	return newError("munmap", err)
}

// Access is a set of enum ibv_access_flags.
type Access int

// Access flags, with C's values.
const (
	AccessLocalWrite   Access = C.IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite  Access = C.IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead   Access = C.IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic Access = C.IBV_ACCESS_REMOTE_ATOMIC
	AccessOnDemand     Access = C.IBV_ACCESS_ON_DEMAND
)

func (a Access) String() string {
	var s []string
	for _, f := range []struct {
		f Access
		n string
	}{{AccessLocalWrite, "LOCAL_WRITE"}, {AccessRemoteWrite, "REMOTE_WRITE"},
		{AccessRemoteRead, "REMOTE_READ"}, {AccessRemoteAtomic, "REMOTE_ATOMIC"}, {AccessOnDemand, "ON_DEMAND"}} {
		if a&f.f != 0 {
			s = append(s, f.n)
		}
	}
	if len(s) == 0 {
		return "0"
	}
	return strings.Join(s, "|")
}

// MR is a registered memory region (struct ibv_mr).
type MR struct {
	pd     *PD
	mr     *C.struct_ibv_mr
	addr   uint64
	length uint64
	lkey   uint32
	rkey   uint32
	access Access
	closed bool
}

// lockedBytes counts bytes registered by this process (for the memlock check).
var lockedBytes atomic.Uint64

// RegisterMR registers length bytes of buf starting at offset with the given
// access (grant only what the test needs). It checks RLIMIT_MEMLOCK first and
// returns *MemlockError when the limit is too low.
func (p *PD) RegisterMR(buf *Buffer, offset, length int, access Access) (*MR, error) {
	if buf.closed {
		return nil, ErrClosed
	}
	if offset < 0 || length <= 0 || offset+length > len(buf.mem) {
		return nil, fmt.Errorf("verbs: register %d bytes at offset %d: buffer has %d bytes", length, offset, len(buf.mem))
	}
	if err := CheckMemlock(uint64(length)); err != nil {
		return nil, err
	}
	pd, err := p.acquire()
	if err != nil {
		return nil, err
	}
	addr := buf.Addr() + uint64(offset)
	mr, err := C.rb_reg_mr(pd, C.uint64_t(addr), C.uint64_t(length), C.int(access))
	if mr == nil {
		p.release()
		e := &Error{Op: "ibv_reg_mr", Detail: fmt.Sprintf("%d bytes, access %s", length, access), Err: err}
		if err == syscall.ENOMEM {
			e.Detail += "; ENOMEM usually means RLIMIT_MEMLOCK is too low (ulimit -l)"
		}
		return nil, e
	}
	lockedBytes.Add(uint64(length))
	return &MR{pd: p, mr: mr, addr: addr, length: uint64(length), lkey: uint32(mr.lkey), rkey: uint32(mr.rkey), access: access}, nil
}

// Addr is the registered start address; Len its length in bytes.
func (m *MR) Addr() uint64 { return m.addr }

// Len is the registered length, bytes; 0 for a nil *MR.
func (m *MR) Len() uint64 {
	if m == nil {
		return 0
	}
	return m.length
}

// LKey is the local key.
func (m *MR) LKey() uint32 { return m.lkey }

// RKey is the remote key (meaningful only with a remote access flag).
func (m *MR) RKey() uint32 { return m.rkey }

// Access is the access the MR was registered with.
func (m *MR) Access() Access { return m.access }

// Close deregisters the MR. Idempotent; nil on a nil *MR.
func (m *MR) Close() error {
	if m == nil || m.closed {
		return nil
	}
	m.closed = true
	defer m.pd.release()
	lockedBytes.Add(^(m.length - 1))
	if rc := C.ibv_dereg_mr(m.mr); rc != 0 {
		return &Error{Op: "ibv_dereg_mr", Err: syscall.Errno(rc)}
	}
	return nil
}

// CheckMemlock returns *MemlockError when registering more bytes would pass
// RLIMIT_MEMLOCK. A thread with CAP_IPC_LOCK is not limited (as in the
// kernel's ib_umem_get).
func CheckMemlock(more uint64) error {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		return newError("getrlimit(RLIMIT_MEMLOCK)", err)
	}
	return checkMemlock(rl.Cur, lockedBytes.Load()+more, hasCapIPCLock())
}

func checkMemlock(limit, needed uint64, capable bool) error {
	if capable || limit == unix.RLIM_INFINITY || needed <= limit {
		return nil
	}
	return &MemlockError{Current: limit, Needed: needed}
}

// hasCapIPCLock reads the calling thread's effective capabilities.
func hasCapIPCLock() bool {
	f, err := os.Open("/proc/thread-self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			bits, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && bits&(1<<unix.CAP_IPC_LOCK) != 0
		}
	}
	return false
}
