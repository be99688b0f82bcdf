// Package measure holds the client's measurement loops around the C
// engines: a latency test's ping-pong (Lat) and a bandwidth sender's
// warm-up and measured phase (BW, BWWarmup, BWPhase) with the drainer of
// its sample rings, the reporting intervals and the live status line, the
// CPU time of the engine thread, and the pinning of engine threads
// (LockThread). Options are how the client measures and reports. It knows
// the endpoints (bench/endpoint) but neither the server nor the client nor
// the test kinds (bench), which call it.
package measure
