package numa

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/rdmabench/rdmabench/internal/operr"

	"golang.org/x/sys/unix"
)

// Memory policy modes and flags of set_mempolicy(2) and get_mempolicy(2)
// (linux/mempolicy.h).
const (
	mpolDefault = 0
	mpolBind    = 2
	mpolFNode   = 1 << 0
	mpolFAddr   = 1 << 1
)

// maskWords is the size of the node masks passed to the kernel: 1024 nodes.
const maskWords = 16

// Bind runs fn on a goroutine locked to its own OS thread whose memory
// policy is MPOL_BIND to node: pages fn's mappings fault in (mmap with
// MAP_POPULATE) come from node, or the allocation fails. The thread's
// policy is MPOL_DEFAULT again afterwards; if that cannot be restored the
// thread is left locked, and the runtime ends it with the goroutine. Bind
// returns fn's error, or a *operr.Error{Op: "set_mempolicy"} before fn
// runs.
func Bind(node int, fn func() error) error {
	if node < 0 || node >= maskWords*64 {
		return fmt.Errorf("NUMA node %d out of range 0..%d", node, maskWords*64-1)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var mask [maskWords]uint64
		mask[node/64] = 1 << (node % 64)
		if err := setMempolicy(mpolBind, &mask); err != nil {
			runtime.UnlockOSThread()
			done <- &operr.Error{Op: "set_mempolicy", Detail: fmt.Sprintf("MPOL_BIND to node %d", node), Err: err}
			return
		}
		err := fn()
		if setMempolicy(mpolDefault, nil) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

func setMempolicy(mode int, mask *[maskWords]uint64) error {
	var p unsafe.Pointer
	var maxnode uintptr
	if mask != nil {
		p, maxnode = unsafe.Pointer(mask), maskWords*64+1
	}
	if _, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(mode), uintptr(p), maxnode); e != 0 {
		return e
	}
	return nil
}

// NodeOf is the NUMA node of the page at addr, which must be mapped and
// faulted in (get_mempolicy with MPOL_F_NODE|MPOL_F_ADDR).
func NodeOf(addr uintptr) (int, error) {
	var node int32
	if _, _, e := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(&node)), 0, 0, addr, mpolFNode|mpolFAddr, 0); e != 0 {
		return -1, &operr.Error{Op: "get_mempolicy", Detail: fmt.Sprintf("node of address 0x%x", addr), Err: e}
	}
	return int(node), nil
}

// Affinity is the calling thread's CPU affinity (sched_getaffinity), sorted.
func Affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, &operr.Error{Op: "sched_getaffinity", Err: err}
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
