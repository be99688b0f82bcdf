// Package bench is the benchmark engine's control plane: the client (Dial,
// Client.Run, RunClient, RunLoopback) sends each test (a bench/spec Spec)
// to the server (bench/server) over the control protocol (bench/proto),
// both sides open their device (bench/device: by route, its limits and
// facts) and build the test's endpoints (bench/endpoint: QPs, CQs,
// registered memory from verbs pools, within the resource budget), the C
// loop in verbs runs the timed traffic under the test's kind (bench/kinds:
// both halves of each kind) and bench/measure's loops, and the samples
// become a result.Result in a Document (bench/result).
//
// What one test is lives in bench/spec (pure Go): Spec, Plan, defaults,
// validation, the op table; callers use its names directly (spec.Spec,
// spec.MaxSize, ...). The host's environment lives in bench/hostenv (pure
// Go). docs/architecture.md has the layer table, which says where every
// package sits and what it may import (internal/buildcheck's TestLayers
// holds the code to it), and the map of every package.
package bench
