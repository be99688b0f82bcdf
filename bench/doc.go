// Package bench is the benchmark engine: a Plan (flags) expands into Specs,
// the client sends each Spec to the server over the control protocol
// (bench/proto), both sides build endpoints (QPs, CQs, registered memory
// from verbs pools), the C loop in verbs runs the timed traffic, and the
// samples become a result.Result in a Document (bench/result).
//
// Files by concept: plan.go and spec.go (what a test is), defaults.go (every
// default), validate.go (limits), parse.go (flag values), server.go and
// responder.go (the server), client.go, run.go (loopback and client runs),
// endpoint.go and endpoints.go (one QP; all QPs of a test), device.go
// (an open device and what it supports), route.go (the device chosen by
// route, and pairs that cannot talk), inline.go (the inline size: device
// probe, perftest's rules), memory.go, meminfo.go and mrmode.go (registered
// memory), cm.go (rdma_cm), load.go
// (latency under load), measure.go and multi.go (the measurement), tcp.go
// (the kernel TCP baseline), env.go, envcheck.go and devices.go (where a run
// took place), counters.go (each side's port counters around each test).
// docs/architecture.md has the map.
package bench
