// Package faults is rdmabench's own fault-injection suite, as Go tests
// (TestFaults, one subtest per case: group/name). It runs in the one-guest
// bed (go test -exec build/vmexec ./internal/e2e/faults; RDMABENCH_BIN names
// the binary under test), drives the rdmabench binary as servers and
// clients, and plays bad peers on raw TCP connections: garbage and
// malformed frames, floods, idle, slow and silent peers, authentication
// failures, kills and stops of either side, memory bombs and absurd flag
// values. Outside a guest it skips.
//
// Cases live in one file per group (auth_test.go, budget_test.go,
// flags_test.go, ...) and register themselves from init with register.
// Each case has its own control port (19001 on, in the order of the
// sorted case list); serial cases run alone, a run of parallel neighbours
// at once (-faults.j, default 4).
package faults
