package verbs

/*
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <unistd.h>
#include <infiniband/verbs.h>

// rb_async_ev is the part of an ibv_async_event that outlives its ack.
typedef struct {
	int type;     // enum ibv_event_type
	int port;     // port events
	uint32_t qpn; // QP events
	int has_qp;
} rb_async_ev;

// rb_async_setup makes the context's async fd non-blocking, so that a
// ibv_get_async_event after poll never blocks; 0 or -errno.
static int rb_async_setup(struct ibv_context *ctx) {
	int fl = fcntl(ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

// rb_async_next waits up to timeout_ms for an asynchronous event of ctx or
// a byte on wake (the stop pipe). It returns 1 with *out filled (the event
// acknowledged), 0 when nothing came, 2 when woken, or -errno.
static int rb_async_next(struct ibv_context *ctx, int wake, int timeout_ms, rb_async_ev *out) {
	struct pollfd p[2] = {{ctx->async_fd, POLLIN, 0}, {wake, POLLIN, 0}};
	int n = poll(p, 2, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (p[1].revents)
		return 2;
	if (n == 0 || !(p[0].revents & POLLIN))
		return p[0].revents & (POLLERR | POLLNVAL) ? -EIO : 0;
	struct ibv_async_event ev;
	if (ibv_get_async_event(ctx, &ev))
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	out->type = ev.event_type;
	out->port = 0;
	out->qpn = 0;
	out->has_qp = 0;
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		out->qpn = ev.element.qp->qp_num;
		out->has_qp = 1;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		out->port = ev.element.port_num;
		break;
	default:
		break;
	}
	ibv_ack_async_event(&ev); // always: ibv_destroy_* waits for every event's ack
	return 1;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"syscall"
)

// AsyncEventType is enum ibv_event_type.
type AsyncEventType int

// Asynchronous event types (ibv_get_async_event), named as in libibverbs.
const (
	IBV_EVENT_CQ_ERR              AsyncEventType = C.IBV_EVENT_CQ_ERR
	IBV_EVENT_QP_FATAL            AsyncEventType = C.IBV_EVENT_QP_FATAL
	IBV_EVENT_QP_REQ_ERR          AsyncEventType = C.IBV_EVENT_QP_REQ_ERR
	IBV_EVENT_QP_ACCESS_ERR       AsyncEventType = C.IBV_EVENT_QP_ACCESS_ERR
	IBV_EVENT_COMM_EST            AsyncEventType = C.IBV_EVENT_COMM_EST
	IBV_EVENT_SQ_DRAINED          AsyncEventType = C.IBV_EVENT_SQ_DRAINED
	IBV_EVENT_PATH_MIG            AsyncEventType = C.IBV_EVENT_PATH_MIG
	IBV_EVENT_PATH_MIG_ERR        AsyncEventType = C.IBV_EVENT_PATH_MIG_ERR
	IBV_EVENT_DEVICE_FATAL        AsyncEventType = C.IBV_EVENT_DEVICE_FATAL
	IBV_EVENT_PORT_ACTIVE         AsyncEventType = C.IBV_EVENT_PORT_ACTIVE
	IBV_EVENT_PORT_ERR            AsyncEventType = C.IBV_EVENT_PORT_ERR
	IBV_EVENT_LID_CHANGE          AsyncEventType = C.IBV_EVENT_LID_CHANGE
	IBV_EVENT_PKEY_CHANGE         AsyncEventType = C.IBV_EVENT_PKEY_CHANGE
	IBV_EVENT_SM_CHANGE           AsyncEventType = C.IBV_EVENT_SM_CHANGE
	IBV_EVENT_SRQ_ERR             AsyncEventType = C.IBV_EVENT_SRQ_ERR
	IBV_EVENT_SRQ_LIMIT_REACHED   AsyncEventType = C.IBV_EVENT_SRQ_LIMIT_REACHED
	IBV_EVENT_QP_LAST_WQE_REACHED AsyncEventType = C.IBV_EVENT_QP_LAST_WQE_REACHED
	IBV_EVENT_CLIENT_REREGISTER   AsyncEventType = C.IBV_EVENT_CLIENT_REREGISTER
	IBV_EVENT_GID_CHANGE          AsyncEventType = C.IBV_EVENT_GID_CHANGE
	IBV_EVENT_WQ_FATAL            AsyncEventType = C.IBV_EVENT_WQ_FATAL
)

var asyncEventNames = map[AsyncEventType]string{
	IBV_EVENT_CQ_ERR: "IBV_EVENT_CQ_ERR", IBV_EVENT_QP_FATAL: "IBV_EVENT_QP_FATAL",
	IBV_EVENT_QP_REQ_ERR: "IBV_EVENT_QP_REQ_ERR", IBV_EVENT_QP_ACCESS_ERR: "IBV_EVENT_QP_ACCESS_ERR",
	IBV_EVENT_COMM_EST: "IBV_EVENT_COMM_EST", IBV_EVENT_SQ_DRAINED: "IBV_EVENT_SQ_DRAINED",
	IBV_EVENT_PATH_MIG: "IBV_EVENT_PATH_MIG", IBV_EVENT_PATH_MIG_ERR: "IBV_EVENT_PATH_MIG_ERR",
	IBV_EVENT_DEVICE_FATAL: "IBV_EVENT_DEVICE_FATAL", IBV_EVENT_PORT_ACTIVE: "IBV_EVENT_PORT_ACTIVE",
	IBV_EVENT_PORT_ERR: "IBV_EVENT_PORT_ERR", IBV_EVENT_LID_CHANGE: "IBV_EVENT_LID_CHANGE",
	IBV_EVENT_PKEY_CHANGE: "IBV_EVENT_PKEY_CHANGE", IBV_EVENT_SM_CHANGE: "IBV_EVENT_SM_CHANGE",
	IBV_EVENT_SRQ_ERR: "IBV_EVENT_SRQ_ERR", IBV_EVENT_SRQ_LIMIT_REACHED: "IBV_EVENT_SRQ_LIMIT_REACHED",
	IBV_EVENT_QP_LAST_WQE_REACHED: "IBV_EVENT_QP_LAST_WQE_REACHED", IBV_EVENT_CLIENT_REREGISTER: "IBV_EVENT_CLIENT_REREGISTER",
	IBV_EVENT_GID_CHANGE: "IBV_EVENT_GID_CHANGE", IBV_EVENT_WQ_FATAL: "IBV_EVENT_WQ_FATAL",
}

// String is the libibverbs name, e.g. "IBV_EVENT_PORT_ERR".
func (t AsyncEventType) String() string {
	if s, ok := asyncEventNames[t]; ok {
		return s
	}
	return fmt.Sprintf("ibv_event_type(%d)", int(t))
}

// AsyncEvent is one asynchronous event of a device, already acknowledged.
type AsyncEvent struct {
	Type   AsyncEventType
	Device string // e.g. "rxe1"
	Port   int    // port events: the port number; else 0
	QPN    uint32 // QP events: the QP's number
	HasQP  bool   // the event names a QP (QPN is valid)
}

// String names the event and what it concerns, e.g.
// "IBV_EVENT_PORT_ERR on rxe1 port 1" or "IBV_EVENT_QP_FATAL on rxe0 QP 0x11".
func (e AsyncEvent) String() string {
	s := e.Type.String() + " on " + e.Device
	switch {
	case e.Port > 0:
		s += fmt.Sprintf(" port %d", e.Port)
	case e.HasQP:
		s += fmt.Sprintf(" QP 0x%x", e.QPN)
	}
	return s
}

// Fatal reports whether the event ends the work of what it concerns: a
// port that went down, a QP, CQ, SRQ or WQ in error, or the whole device.
func (e AsyncEvent) Fatal() bool {
	switch e.Type {
	case IBV_EVENT_PORT_ERR, IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR,
		IBV_EVENT_CQ_ERR, IBV_EVENT_SRQ_ERR, IBV_EVENT_WQ_FATAL, IBV_EVENT_DEVICE_FATAL, IBV_EVENT_PATH_MIG_ERR:
		return true
	}
	return false
}

// AsyncEventError is a fatal asynchronous event that ended a test.
type AsyncEventError struct{ Event AsyncEvent }

func (e *AsyncEventError) Error() string { return "async event " + e.Event.String() }

// asyncPoll is the longest single wait of an AsyncWatcher's poll: Close
// wakes it at once through a pipe; the cap bounds a missed wake-up.
const asyncPollMS = 1000

// AsyncWatcher reads a device's asynchronous events (ibv_get_async_event on
// the context's async fd) on its own goroutine, acknowledges each and
// passes it to a callback. It holds the Context open until Close.
type AsyncWatcher struct {
	c         *Context
	ctx       *C.struct_ibv_context
	wake      [2]int // the stop pipe: Close writes wake[1]
	done      chan struct{}
	err       error // why the watch ended early (poll or read failure), once done
	closeOnce sync.Once
}

// WatchAsyncEvents starts watching c's asynchronous events: fn is called
// with each, on the watcher's goroutine (keep it short). Close the watcher
// before the Context.
func (c *Context) WatchAsyncEvents(fn func(AsyncEvent)) (*AsyncWatcher, error) {
	ctx, err := c.acquire()
	if err != nil {
		return nil, err
	}
	w := &AsyncWatcher{c: c, ctx: ctx, done: make(chan struct{})}
	if rc := C.rb_async_setup(ctx); rc != 0 {
		c.release()
		return nil, &Error{Op: "fcntl", Detail: c.name + " async fd O_NONBLOCK", Err: syscall.Errno(-rc)}
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		c.release()
		return nil, &Error{Op: "pipe2", Detail: "async event watcher of " + c.name, Err: err}
	}
	w.wake = p
	go w.run(fn)
	return w, nil
}

func (w *AsyncWatcher) run(fn func(AsyncEvent)) {
	defer close(w.done)
	var ev C.rb_async_ev
	for {
		switch rc := C.rb_async_next(w.ctx, C.int(w.wake[0]), asyncPollMS, &ev); {
		case rc == 1:
			fn(AsyncEvent{Type: AsyncEventType(ev._type), Device: w.c.name, Port: int(ev.port), QPN: uint32(ev.qpn), HasQP: ev.has_qp != 0})
		case rc == 2:
			return
		case rc < 0:
			w.err = &Error{Op: "ibv_get_async_event", Detail: w.c.name, Err: syscall.Errno(-rc)}
			return
		}
	}
}

// Close stops the watcher (at once: a pipe wakes its poll), waits for its
// goroutine and releases the Context. It returns the error that ended the
// watch early, if any. Idempotent; nil on a nil *AsyncWatcher.
func (w *AsyncWatcher) Close() error {
	if w == nil {
		return nil
	}
	w.closeOnce.Do(func() {
		syscall.Write(w.wake[1], []byte{1})
		<-w.done
		syscall.Close(w.wake[0])
		syscall.Close(w.wake[1])
		w.c.release()
	})
	return w.err
}
