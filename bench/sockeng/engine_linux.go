package sockeng

/*
#cgo CFLAGS: -I${SRCDIR}/../../internal/cloop
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"syscall"
	"time"
	"unsafe"

	_ "github.com/rdmabench/rdmabench/internal/cloop" // cloop.h: rebuild when it changes
	"github.com/rdmabench/rdmabench/internal/operr"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrPeerClosed: the peer closed a TCP connection (EOF) that a socket
	// loop still needed. The error is a *PeerClosedError.
	ErrPeerClosed = errors.New("connection closed by the peer (EOF)")
	// ErrTimeout: no byte moved for Config.Timeout.
	ErrTimeout = errors.New("timed out")
	// ErrAborted: a loop was aborted through Engine.Abort.
	ErrAborted = errors.New("aborted")
)

// Error is a failed system call: Op names it, Err is usually a
// syscall.Errno. Detail, when set, names the loop and what it waited for.
type Error = operr.Error

// PeerClosedError is an EOF in a socket loop. Got and Want are the bytes
// of the unit in progress (a message, a phase header, a phase); Boundary
// reports an EOF where the stream may end: a ping-pong responder between
// iterations.
type PeerClosedError struct {
	Loop       string // e.g. "latency responder"
	Waiting    string // what the loop was waiting for
	Iterations uint64 // iterations done, or whole messages received
	Got, Want  uint64
	Boundary   bool
}

func (e *PeerClosedError) Error() string {
	if e.Boundary {
		return fmt.Sprintf("%s: %v after %d iterations", e.Loop, ErrPeerClosed, e.Iterations)
	}
	return fmt.Sprintf("%s: %v while waiting for %s (%d of %d bytes; %d messages done)",
		e.Loop, ErrPeerClosed, e.Waiting, e.Got, e.Want, e.Iterations)
}

// Is makes errors.Is(err, ErrPeerClosed) true.
func (e *PeerClosedError) Is(target error) bool { return target == ErrPeerClosed }

// OpenEnded is the message count of a bandwidth phase that lasts until
// Engine.BWFinish.
const OpenEnded = math.MaxUint64

// Config sets up an Engine.
type Config struct {
	Size    int           // message size, bytes (1..1 GiB)
	Samples int           // sample buffer capacity, entries (>= 16)
	Timeout time.Duration // longest wait without a byte moving; 0: 10 s
}

// Engine runs the kernel-TCP baseline's measurement loops in C, over one
// connected TCP socket: the socket counterpart of verbs.Engine. Its state,
// its message buffers and its sample buffer live in C memory; Close frees
// them.
//
// The engine works on a private duplicate of the connection's descriptor,
// which it makes blocking; the blocking mode is shared with the
// *net.TCPConn, so use that only to close it (or CloseWrite) once the engine
// exists. An Engine is driven by one goroutine at a time, which should be
// locked to its OS thread; SetStop and Abort are safe from any goroutine.
type Engine struct {
	e      *C.rb_sock
	cfg    Config
	mu     sync.Mutex // orders SetStop, Abort and the accessors (any goroutine) with Close
	closed bool
	loops  sync.WaitGroup // loops running: Close aborts them and waits before it frees
}

// errClosed is what a loop started after Close returns.
var errClosed = errors.New("sockeng: engine closed")

// enter registers a loop about to run; it fails after Close. Pair it with
// g.loops.Done.
func (g *Engine) enter() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errClosed
	}
	g.loops.Add(1)
	return nil
}

// state is the C state, or nil after Close.
func (g *Engine) state() *C.rb_sock {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.e
}

// maxSize is the largest message an Engine sends, bytes.
const maxSize = 1 << 30

// maxTick is how often a blocked send or receive checks Abort, SetStop and
// the timeout.
const maxTick = 100 * time.Millisecond

// NewEngine creates an engine over conn, which must be connected.
func NewEngine(conn *net.TCPConn, cfg Config) (_ *Engine, err error) {
	switch {
	case conn == nil:
		return nil, errors.New("sockeng: the engine needs a connection")
	case cfg.Size < 1 || cfg.Size > maxSize:
		return nil, fmt.Errorf("sockeng: message size %d out of range 1..%d", cfg.Size, maxSize)
	case cfg.Samples < 16:
		return nil, fmt.Errorf("sockeng: sample buffer %d must hold at least 16 samples", cfg.Samples)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	tick := min(maxTick, cfg.Timeout/2)
	tick = max(tick, time.Millisecond)
	e := (*C.rb_sock)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rb_sock{}))))
	if e == nil {
		return nil, &Error{Op: "calloc", Err: syscall.ENOMEM}
	}
	e.fd = -1
	g := &Engine{e: e, cfg: cfg}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	e.buf = (*C.uint8_t)(C.calloc(C.size_t(cfg.Size), 1))
	e.rbuf = (*C.uint8_t)(C.malloc(C.RBS_RECV_CHUNK))
	e.samples = (*C.uint64_t)(C.calloc(C.size_t(cfg.Samples), 8))
	if e.buf == nil || e.rbuf == nil || e.samples == nil {
		return nil, &Error{Op: "calloc", Detail: fmt.Sprintf("%d-byte message, %d samples", cfg.Size, cfg.Samples), Err: syscall.ENOMEM}
	}
	e.size = C.uint32_t(cfg.Size)
	C.rb_ctl_init(&e.ctl, C.int64_t(cfg.Timeout.Nanoseconds()))
	e.tick_ns = C.int64_t(tick.Nanoseconds())
	e.cap = C.uint64_t(cfg.Samples)
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("sockeng: %w", err)
	}
	var crc C.int
	if err := rc.Control(func(fd uintptr) { crc = C.rbs_setup(e, C.int(fd)) }); err != nil {
		return nil, fmt.Errorf("sockeng: %w", err)
	}
	if err := g.err(crc, "socket engine setup", false, 0); err != nil {
		return nil, err
	}
	return g, nil
}

// err turns a loop's return code into an error. done is the loop's progress
// for messages: iterations, or messages written or received.
func (g *Engine) err(rc C.int, what string, boundary bool, done uint64) error {
	e := g.e
	switch rc {
	case C.RB_OK:
		return nil
	case C.RBS_ERR_SYS:
		return &Error{Op: C.GoString(e.err_op), Detail: fmt.Sprintf("%s, %d-byte messages, %s", what, g.cfg.Size, C.GoString(e.ctl.wait_what)),
			Err: syscall.Errno(e.err_errno)}
	case C.RB_TIMEOUT:
		return fmt.Errorf("%s: %w: no progress for %v while waiting for %s (%d messages done)", what, ErrTimeout, g.cfg.Timeout,
			C.GoString(e.ctl.wait_what), done)
	case C.RB_ABORTED:
		return fmt.Errorf("%s: %w", what, ErrAborted)
	case C.RBS_EOF:
		return &PeerClosedError{Loop: what, Waiting: C.GoString(e.ctl.wait_what), Iterations: done,
			Got: uint64(e.err_got), Want: uint64(e.err_want), Boundary: boundary && e.err_got == 0}
	case C.RBS_PROTO:
		return fmt.Errorf("%s: the peer's byte stream is not an rdmabench TCP stream: bad %s", what, C.GoString(e.ctl.wait_what))
	}
	return fmt.Errorf("%s: socket engine returned %d", what, int(rc))
}

// Now reads the engine's clock (CLOCK_MONOTONIC_RAW), ns: the clock of the
// samples, of BWClient's until and of Span.
func Now() int64 { return int64(C.rb_now_ns()) }

// Size is the message size, bytes.
func (g *Engine) Size() int { return g.cfg.Size }

// ResetSamples empties the sample buffer.
func (g *Engine) ResetSamples() {
	if e := g.state(); e != nil {
		e.nsamples = 0
	}
}

// Samples is a view of the samples collected since the last ResetSamples,
// ns, in C memory: valid until the next call on the engine.
func (g *Engine) Samples() []uint64 {
	e := g.state()
	if e == nil {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(e.samples)), int(e.nsamples))
}

// Capacity is the sample buffer's size, entries.
func (g *Engine) Capacity() int {
	if e := g.state(); e != nil {
		return int(e.cap)
	}
	return 0
}

// LatClient runs n ping-pong iterations in one C call: it sends Size bytes,
// reads Size bytes back, and appends the round trip (ns) to the sample
// buffer, which n must fit in.
func (g *Engine) LatClient(n int) error {
	if n <= 0 {
		return nil
	}
	if err := g.enter(); err != nil {
		return err
	}
	defer g.loops.Done()
	if int(g.e.nsamples)+n > int(g.e.cap) {
		return fmt.Errorf("sockeng: %d iterations do not fit the %d-sample buffer (%d used)", n, int(g.e.cap), int(g.e.nsamples))
	}
	return g.err(C.rbs_lat_client(g.e, C.uint64_t(n)), "TCP latency client", false, g.Iterations())
}

// LatServer echoes Size-byte messages until SetStop's count is reached,
// Abort, an error, or the timeout passes without a byte. The peer's close
// is a *PeerClosedError; Boundary is set when it came between iterations.
func (g *Engine) LatServer() error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.loops.Done()
	return g.err(C.rbs_lat_server(g.e), "TCP latency responder", true, g.Iterations())
}

// SetStop tells LatServer to return once n iterations are done. It is safe
// to call from another goroutine while the loop runs, and after Close (a
// no-op); a loop blocked in a receive notices it within 100 ms.
func (g *Engine) SetStop(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		C.rb_ctl_set_stop(&g.e.ctl, C.int64_t(n))
	}
}

// Abort makes a running loop, or the next one, return ErrAborted within
// 100 ms. Safe from another goroutine, and after Close (a no-op).
func (g *Engine) Abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		C.rb_ctl_abort(&g.e.ctl)
	}
}

// Iterations is the number of ping-pong iterations done, or of whole
// messages received by a bandwidth receiver.
// After Close it is 0.
func (g *Engine) Iterations() uint64 {
	if e := g.state(); e != nil {
		return uint64(e.iter)
	}
	return 0
}

// Received is the payload a bandwidth receiver got, bytes.
func (g *Engine) Received() uint64 {
	if e := g.state(); e != nil {
		return uint64(e.bytes)
	}
	return 0
}

// BWPhase starts a bandwidth phase of msgs messages, or OpenEnded: it
// sends the phase header and resets Written and Span.
func (g *Engine) BWPhase(msgs uint64) error {
	if msgs == 0 {
		return errors.New("sockeng: a bandwidth phase needs at least one message")
	}
	if err := g.enter(); err != nil {
		return err
	}
	defer g.loops.Done()
	return g.err(C.rbs_bw_phase(g.e, C.uint64_t(msgs)), "TCP bandwidth sender", false, g.Written())
}

// BWClient sends Size-byte messages until the phase's messages are written,
// the engine clock passes until (ns, see Now), or the sample buffer is full
// (full=true). Each message appends the time its send calls took (ns).
func (g *Engine) BWClient(until int64) (full bool, err error) {
	if err := g.enter(); err != nil {
		return false, err
	}
	defer g.loops.Done()
	rc := C.rbs_bw_client(g.e, C.int64_t(until))
	if rc == C.RB_FULL {
		return true, nil
	}
	return false, g.err(rc, "TCP bandwidth sender", false, g.Written())
}

// Written is the number of messages written in the current phase.
func (g *Engine) Written() uint64 {
	if e := g.state(); e != nil {
		return uint64(e.written)
	}
	return 0
}

// BWFinish ends the phase and waits for the receiver's acknowledgement of
// its last byte. A counted phase must be complete (Written equals its
// count); an open-ended one is ended by shutting down the sending side, so
// it is the stream's last.
func (g *Engine) BWFinish() error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.loops.Done()
	if t := uint64(g.e.target); t != OpenEnded && uint64(g.e.written) != t {
		return fmt.Errorf("sockeng: bandwidth phase of %d messages finished after %d", t, uint64(g.e.written))
	}
	return g.err(C.rbs_bw_finish(g.e), "TCP bandwidth sender", false, g.Written())
}

// Span is the phase's first send and the arrival of the receiver's
// acknowledgement (engine clock, ns), once BWFinish returned.
func (g *Engine) Span() (first, last int64) {
	if e := g.state(); e != nil {
		return int64(e.t_first), int64(e.t_last)
	}
	return 0, 0
}

// BWServer receives bandwidth phases, acknowledging each one's last byte,
// until an open-ended phase ends or the sender closes between phases; an
// EOF inside a phase is a *PeerClosedError.
func (g *Engine) BWServer() error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.loops.Done()
	return g.err(C.rbs_bw_server(g.e), "TCP bandwidth receiver", false, g.Iterations())
}

// Close closes the engine's descriptor (not the connection: close that too)
// and frees the C state. A loop still running is aborted first, and Close
// waits for it to return (within 100 ms); later calls return an error, and
// the accessors return zeros. Idempotent; nil on a nil *Engine.
func (g *Engine) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	C.rb_ctl_abort(&g.e.ctl)
	g.mu.Unlock()
	g.loops.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	C.rbs_close(g.e)
	C.free(unsafe.Pointer(g.e.buf))
	C.free(unsafe.Pointer(g.e.rbuf))
	C.free(unsafe.Pointer(g.e.samples))
	C.free(unsafe.Pointer(g.e))
	g.e = nil
	return nil
}
