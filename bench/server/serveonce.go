package server

import (
	"sync"
)

// `rdmabench server --once` (Config.Once): the server serves the
// first client session that runs a test and then stops, as perftest's
// server ends after its one test. Scripts start it per run and wait for it
// to exit, which needs no polling: a harness that polls while a test runs
// takes CPU from the run it measures. Connections that never reach a test
// (refused, unauthenticated, busy, doctor-only) do not end it.

// onceState records the end of that session. The zero value is ready.
type onceState struct {
	mu    sync.Mutex
	done  chan struct{} // closed when the session ended; made on first use
	ended bool
	err   error // the session's first failure; nil when every test passed
}

// ch is the channel closed when the session ended.
func (o *onceState) ch() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done == nil {
		o.done = make(chan struct{})
	}
	return o.done
}

// end records the session's end and its first failure (nil: none); only
// the first call counts.
func (o *onceState) end(err error) {
	o.ch()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return
	}
	o.ended, o.err = true, err
	close(o.done)
}

// result reports whether the session ended, and its failure.
func (o *onceState) result() (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ended, o.err
}
