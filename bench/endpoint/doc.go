// Package endpoint holds one side's queue pairs of a test and their
// registered memory: each QP with its CQs, buffer and C engine
// (Endpoint), all QPs of a test (Test: measured, load and idle QPs, the
// spread region, the shared receive queue), the pools they take their
// buffers from (Memory), the verbs half of the op table, the options that
// differ from perftest (address stepping, relaxed ordering, GRH, completion
// vectors), the resource budget that is checked before anything is mapped
// (NeedOf, Budget, Ledger), and rdma_cm's connection of the QPs. It knows
// the device (bench/device) but neither the server nor the client nor the
// test kinds (bench), which use it.
package endpoint
