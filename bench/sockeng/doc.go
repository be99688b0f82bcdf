// Package sockeng is the measurement engine of rdmabench's kernel-TCP
// baseline: ping-pong and streaming loops over one connected TCP socket,
// written in C like the RDMA loops of package verbs, so that both
// transports are timed the same way.
//
// # Loops
//
// An [Engine] holds one connection's C state, message buffers and sample
// buffer in C memory. Go enters a C loop once per batch of iterations
// ([Engine.LatClient], [Engine.BWClient]) or once per test (the
// responders [Engine.LatServer] and [Engine.BWServer]); every send,
// receive and timestamp happens in C. The stream format of a bandwidth
// test is described in engine.h.
//
// # Clock
//
// Every timestamp is taken in C with clock_gettime(CLOCK_MONOTONIC_RAW), in
// nanoseconds ([Now]): the clock of package verbs. Both packages take the
// clock, the abort and stop flags and the no-progress deadline from the
// same header, internal/cloop's cloop.h.
//
// # Errors
//
// A failed system call is an *[Error] carrying the errno. A loop that saw
// no byte move for [Config.Timeout] returns an error matching
// [ErrTimeout]; [Engine.Abort] makes it return [ErrAborted]; the peer's
// close is a *[PeerClosedError] (errors.Is(err, [ErrPeerClosed])).
package sockeng
