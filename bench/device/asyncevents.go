package device

import (
	"sync"

	"github.com/rdmabench/rdmabench/verbs"
)

// deviceEvents watches an open Device's asynchronous events
// (verbs.AsyncWatcher) for as long as the Device is open, and hands each
// fatal one that concerns it (a port event of its port, any QP, CQ, SRQ or
// device event) to the hooks of the tests running on it, as a
// *verbs.AsyncEventError: the test aborts at once instead of waiting for
// bench/endpoint.EngineTimeout. Copies of a Device share it.
type deviceEvents struct {
	w     *verbs.AsyncWatcher
	port  int
	mu    sync.Mutex
	next  int
	hooks map[int]func(error)
}

// watchEvents starts watching d's events; nil (no watch) when the watcher
// cannot start: tests then end through bench/endpoint.EngineTimeout as before.
func watchEvents(d *Device) *deviceEvents {
	de := &deviceEvents{port: d.Port.Port, hooks: map[int]func(error){}}
	w, err := d.Ctx.WatchAsyncEvents(de.event)
	if err != nil {
		return nil
	}
	de.w = w
	return de
}

// event is the watcher's callback.
func (de *deviceEvents) event(e verbs.AsyncEvent) {
	if !e.Fatal() || (e.Port > 0 && e.Port != de.port) {
		return
	}
	de.mu.Lock()
	hooks := make([]func(error), 0, len(de.hooks))
	for _, h := range de.hooks {
		hooks = append(hooks, h)
	}
	de.mu.Unlock()
	for _, h := range hooks {
		h(&verbs.AsyncEventError{Event: e})
	}
}

// OnEvent calls abort with each fatal event of the device until release is
// called. It is a no-op on a Device without a watch.
func (d *Device) OnEvent(abort func(error)) (release func()) {
	if d == nil || d.events == nil {
		return func() {}
	}
	de := d.events
	de.mu.Lock()
	id := de.next
	de.next++
	de.hooks[id] = abort
	de.mu.Unlock()
	return func() {
		de.mu.Lock()
		delete(de.hooks, id)
		de.mu.Unlock()
	}
}

// close stops the watch.
func (de *deviceEvents) close() error {
	if de == nil {
		return nil
	}
	return de.w.Close()
}
