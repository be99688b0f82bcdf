// Package e2e holds the end-to-end tests of the rdmabench binary as a user runs
// it, in the one-guest SoftRoCE bed (vmtest.One: rxe0 on lo, rxe1 on dummy0
// 192.0.2.1, siw1 on dummy1 203.0.113.1): the command line's devices, runs,
// errors and exit codes, the perftest drop-in against Debian's perftest, the
// driver-behaviour shim (LD_PRELOAD), a three-rank mesh under MPICH's
// mpiexec, and scripts/hw-check.sh. Every test decodes the JSON documents the
// binary writes (bench/result) and validates them against the schemas
// (bench/result/schema).
//
// The package has only tests:
//
//	go test -exec build/vmexec ./internal/e2e
//
// The binary under test is $RDMABENCH_BIN (make sets it to build/rdmabench);
// the shim is $RDMABENCH_DRVSHIM (build/libdrvshim.so). Outside a guest the
// tests that need RDMA skip, or fail when RDMABENCH_REQUIRE_RDMA=1.
package e2e
