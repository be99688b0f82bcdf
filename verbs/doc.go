// Package verbs is rdmabench's thin, typed layer over libibverbs (rdma-core)
// and the C hot loops that drive queue pairs during a measurement. It holds
// no socket code: the kernel-TCP baseline's C loops are package
// bench/sockeng.
//
// # Memory
//
// Buffers that the device reads or writes (memory regions) come from mmap,
// never from the Go heap (see [AllocBuffer]). C memory never holds a Go
// pointer: work requests, scatter/gather entries and completions are built in
// C from scalar arguments. A slice returned by [Buffer.Bytes] is valid until
// the buffer is closed.
//
// A [Pool] registers a few large slabs once and hands out fixed-size
// buffers ([PoolBuf]: address, length, lkey, rkey) without registering per
// Get. An [Engine] can instead register each operation's local buffer
// around its post ([PerOp]), inside its C loop.
//
// # Errors
//
// Failed verbs return *[Error] naming the verb and carrying the errno, so
// errors.Is(err, unix.ENOMEM) works. A failed work completion is a
// *[WCError] with the status name, opcode, vendor error, QP number and wr_id.
// Discovery problems have their own sentinels: [ErrNoKernelSupport],
// [ErrNoDevices], [ErrNoProvider], and *[DeviceNotFoundError]. The package
// never panics on runtime errors.
//
// # Lifetimes
//
// Every object has an idempotent Close, which does nothing and returns nil
// on a nil pointer, so cleanup code needs no nil checks. Close objects in
// reverse order of creation: QP, CQ, MR, buffer, PD, context. A [Context] refuses to close
// while objects created from it are still open.
//
// # Threading
//
// Objects may be used from any goroutine, but a QP, its CQs and its [Engine]
// must be driven by one goroutine at a time. The Engine's hot loops run in C:
// Go enters them once per batch of iterations, and the calling goroutine
// should be locked to its OS thread (runtime.LockOSThread).
//
// # Clock
//
// Every timestamp is taken in C with clock_gettime(CLOCK_MONOTONIC_RAW), in
// nanoseconds. It is not adjusted by NTP, so intervals are raw hardware time.
// The clock, the abort and stop flags, the check cadence of a spinning wait
// and its no-progress deadline come from internal/cloop's cloop.h, shared
// with the socket loops of bench/sockeng.
//
// # Testing
//
// Tests that need a device call [internal/testutil.RequireRDMA]: they skip
// with a reason where there is no RDMA device, and fail instead when
// RDMABENCH_REQUIRE_RDMA=1 (set inside the SoftRoCE guest).
package verbs
